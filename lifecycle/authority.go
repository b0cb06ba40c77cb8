package lifecycle

import "slices"

// NodeIncarnation is one observed, effectively available node incarnation.
// Registered is the catalog revision that registered the incarnation
// (RegisteredNode.Registered); it decides which of several observations of one name is
// the newest.
type NodeIncarnation struct {
	Node        string `json:"node"`
	Incarnation uint64 `json:"incarnation"`
	Registered  uint64 `json:"registered"`
}

// AuthorityMove is one clock authority a drain handed over: Domain's
// authority moved From one identity To another at catalog Revision.
type AuthorityMove struct {
	Domain   string
	From, To Identity
	Revision uint64
}

// FNV-1a 64-bit parameters (the published offset basis and prime). They are
// part of the selection contract: changing them moves authorities.
const (
	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211
)

// DomainHash is the fixed 64-bit hash that places a domain in its candidate
// set: FNV-1a 64 over the UTF-8 bytes of the name. For each byte b,
// h = (h XOR b) × 1099511628211 mod 2^64, starting from
// h = 14695981039346656037.
func DomainHash(name string) uint64 {
	h := fnvOffset64
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= fnvPrime64
	}
	return h
}

// Candidates returns the eligible authority identities: the available
// incarnations whose node name is a current voter, with duplicate
// observations of one name collapsed to the newest incarnation (largest
// Registered; on a tie, largest Incarnation), sorted by node name.
// Observations with an empty name or a zero incarnation are ignored. The
// result does not depend on the order of either input.
func Candidates(available []NodeIncarnation, voters []string) []Identity {
	isVoter := make(map[string]bool, len(voters))
	for _, v := range voters {
		isVoter[v] = true
	}
	newest := make(map[string]NodeIncarnation, len(available))
	for _, a := range available {
		if a.Node == "" || a.Incarnation == 0 || !isVoter[a.Node] {
			continue
		}
		cur, ok := newest[a.Node]
		if !ok || newer(a, cur) {
			newest[a.Node] = a
		}
	}
	out := make([]Identity, 0, len(newest))
	for _, name := range sortedKeys(newest) {
		out = append(out, Identity{Node: name, Incarnation: newest[name].Incarnation})
	}
	return out
}

func newer(a, b NodeIncarnation) bool {
	if a.Registered != b.Registered {
		return a.Registered > b.Registered
	}
	return a.Incarnation > b.Incarnation
}

// SelectAuthority picks the initial or replacement clock authority of a
// domain: the candidate at position DomainHash(domain) mod len(candidates)
// of Candidates(available, voters). Every leader given the same domain and
// candidate set proposes the same owner, and different domains spread over
// the voters. It reports false when no candidate is eligible.
func SelectAuthority(domain string, available []NodeIncarnation, voters []string) (Identity, bool) {
	return pick(domain, Candidates(available, voters))
}

func pick(domain string, candidates []Identity) (Identity, bool) {
	if len(candidates) == 0 {
		return Identity{}, false
	}
	return candidates[DomainHash(domain)%uint64(len(candidates))], true
}

// Reconcile returns the compare-and-set reassignments the leader should
// propose for the current state, in domain-name order. For each paced,
// running domain: a current authority that is still an eligible candidate
// (the newest available incarnation of a voter) is kept; otherwise the
// domain moves to SelectAuthority's choice, or, when nothing is eligible,
// an assigned authority is revoked. Available incarnations that do not
// match the registry are not eligible, so every proposed command passes
// Apply's registry check against the same state. Proposing the commands
// against a later state is safe: a stale one is refused as a conflict.
//
// A cordoned node keeps an authority it holds, but a domain that moves goes
// to an uncordoned candidate while one exists (PreferUncordoned).
func Reconcile(s *State, available []NodeIncarnation, voters []string) []Command {
	candidates := reconcileCandidates(s, available, voters)
	placeable := s.placeable(candidates)
	var out []Command
	for _, d := range s.sortedRecords() {
		if cmd, ok := reconcileDomain(d, candidates, placeable); ok {
			out = append(out, cmd)
		}
	}
	return out
}

// ReconcileDomains is Reconcile for the named domains only, in the order
// given, each at most once; a name the state lacks is skipped. Its cost is
// that of the names, not of the catalog: the leader calls it with the
// domains a committed change touched when neither the candidates nor the
// leadership changed, since every other domain's decision is then what it
// was (Reconcile gave none, or gave one that is still being proposed).
func ReconcileDomains(s *State, names []string, available []NodeIncarnation, voters []string) []Command {
	candidates := reconcileCandidates(s, available, voters)
	placeable := s.placeable(candidates)
	var out []Command
	seen := make(map[string]struct{}, len(names))
	for _, name := range names {
		if _, dup := seen[name]; dup {
			continue
		}
		seen[name] = struct{}{}
		d, ok := s.lookup(name)
		if !ok {
			continue
		}
		if cmd, ok := reconcileDomain(d, candidates, placeable); ok {
			out = append(out, cmd)
		}
	}
	return out
}

// The maintenance states Maintenance reports.
const (
	MaintenanceCordoned = "cordoned"
	MaintenanceDraining = "draining"
)

// Maintenance returns the maintenance state of every cordoned node, by
// name: MaintenanceDraining while it still owns the clock of a running paced
// domain, MaintenanceCordoned once it owns none. A node in service is
// absent. It costs one pass over the domains when a node is cordoned, none
// otherwise.
func Maintenance(s *State) map[string]string {
	out := map[string]string{}
	for name, n := range s.nodes {
		if n.Cordoned {
			out[name] = MaintenanceCordoned
		}
	}
	if len(out) == 0 || s.pacedRunning == 0 {
		return out
	}
	s.eachRecord(func(d *Domain) {
		if keepsAuthority(d) && d.Authority.Assigned() && out[d.Authority.Node] != "" {
			out[d.Authority.Node] = MaintenanceDraining
		}
	})
	return out
}

// PreferUncordoned narrows available to the incarnations of nodes that are
// not cordoned, so that SelectAuthority gives a new authority to none of
// them, as long as that leaves an eligible candidate among voters. When
// every eligible candidate is cordoned it returns available unchanged: a
// cluster whose every node is under maintenance still places its clocks
// (on a cordoned node) rather than refusing to start them.
func (s *State) PreferUncordoned(available []NodeIncarnation, voters []string) []NodeIncarnation {
	out := make([]NodeIncarnation, 0, len(available))
	for _, a := range available {
		if !s.nodes[a.Node].Cordoned {
			out = append(out, a)
		}
	}
	if len(out) == len(available) || len(Candidates(out, voters)) == 0 {
		return available
	}
	return out
}

// placeable is candidates without the cordoned nodes, or candidates
// itself when all of them are cordoned (see PreferUncordoned).
func (s *State) placeable(candidates []Identity) []Identity {
	out := make([]Identity, 0, len(candidates))
	for _, c := range candidates {
		if !s.nodes[c.Node].Cordoned {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return candidates
	}
	return out
}

// reconcileCandidates returns the eligible authorities: the available
// incarnations that match the registry, narrowed to the voters.
func reconcileCandidates(s *State, available []NodeIncarnation, voters []string) []Identity {
	registered := make([]NodeIncarnation, 0, len(available))
	for _, a := range available {
		if n, ok := s.nodes[a.Node]; ok && n.Incarnation == a.Incarnation {
			registered = append(registered, a)
		}
	}
	return Candidates(registered, voters)
}

// reconcileDomain returns the reassignment domain d needs, if any: an
// authority among candidates is kept, a new one is picked from placeable.
func reconcileDomain(d *Domain, candidates, placeable []Identity) (Command, bool) {
	name := d.Name
	if d.Pace != Paced || !d.Running() {
		return Command{}, false
	}
	cur := d.Authority
	if cur.Assigned() && slices.ContainsFunc(candidates, func(c Identity) bool { return c == cur.Identity() }) {
		return Command{}, false
	}
	r := ReassignAuthority{Domain: name, ExpectedGeneration: d.Generation, ExpectedFence: cur}
	if id, ok := pick(name, placeable); ok {
		r.Authority = &id
	} else if !cur.Assigned() {
		return Command{}, false
	}
	return Command{Op: OpReassignAuthority, ReassignAuthority: &r}, true
}
