package lifecycle

import (
	"slices"
	"strings"
)

// RegisteredNode is one registered node incarnation in the replicated registry. A
// process registers its name, a fresh random Incarnation for every process
// start, its stable Raft server ID and its addresses. Registered is the
// catalog revision that committed this incarnation's registration; it orders
// incarnations of the same name (larger is newer). Cordoned marks a node
// under maintenance: it keeps the authorities it holds but is given no new
// one while an uncordoned candidate exists (see PreferUncordoned). The mark
// belongs to the name, so a new incarnation of a cordoned node stays
// cordoned; deregistering the node drops it.
type RegisteredNode struct {
	Name        string `json:"name"`
	Incarnation uint64 `json:"incarnation"`
	RaftID      string `json:"raft_id"`
	RaftAddr    string `json:"raft_addr"`
	APIAddr     string `json:"api_addr"`
	Registered  uint64 `json:"registered"`
	Cordoned    bool   `json:"cordoned,omitempty"`
}

// NodeIncarnation returns the identity of n with its registration order, the
// form authority selection takes.
func (n RegisteredNode) NodeIncarnation() NodeIncarnation {
	return NodeIncarnation{Node: n.Name, Incarnation: n.Incarnation, Registered: n.Registered}
}

// State is the whole replicated catalog: domains by name, the node registry
// and the catalog revision.
//
// Apply mutates a State and is not safe to call concurrently with any other
// method of the same State. The other methods only read a State that nobody
// applies to (Clone included, see there), so any number of goroutines may
// call them at once on, for example, a published Clone. Every accessor returns copies that share no memory
// with the state, and every list is sorted by name, so iteration is
// deterministic.
//
// Clone is cheap: the domain records are immutable and shared, and the
// domain table is copy-on-write (see table.go), so a clone shares
// everything and costs one small allocation whatever the number of domains;
// a clone and its original then evolve independently.
type State struct {
	revision uint64
	count    int // number of domains in the table
	// pacedRunning is the number of running paced domains in the table.
	pacedRunning int
	flat         []*Domain                 // the table while it holds at most flatMax domains; see table.go
	domains      *domainRoot               // the table when it holds more; nil otherwise
	nodes        map[string]RegisteredNode // never written once stored; replaced on change
	own          tableOwnership            // what Apply may write in place; none after Clone
	// fresh is the record onDomain stored last, which no clone shares
	// and Apply may therefore overwrite; nil after Clone. scratch is
	// onDomain's copy for overwriting it all-or-nothing; never shared.
	fresh, scratch *Domain
}

// NewState returns an empty catalog at revision 0.
func NewState() *State {
	return &State{nodes: map[string]RegisteredNode{}}
}

// Revision returns the catalog revision: the number of applied commands that
// changed the state. No-ops and refused commands leave it unchanged.
func (s *State) Revision() uint64 { return s.revision }

// Domain returns a copy of the named domain.
func (s *State) Domain(name string) (Domain, bool) {
	d, ok := s.lookup(name)
	if !ok {
		return Domain{}, false
	}
	return cloneDomain(*d), true
}

// Domains returns copies of every domain, sorted by name.
func (s *State) Domains() []Domain {
	recs := s.sortedRecords()
	out := make([]Domain, len(recs))
	for i, d := range recs {
		out[i] = cloneDomain(*d)
	}
	return out
}

// Len returns the number of domains.
func (s *State) Len() int { return s.count }

// Range calls fn with a copy of every domain, in an order that is
// deterministic for equal states but not sorted, until fn returns false.
// It is Domains without the sort and the slice, for a pass over a large
// catalog that needs no order.
func (s *State) Range(fn func(Domain) bool) {
	stop := false
	s.eachRecord(func(d *Domain) {
		if !stop && !fn(cloneDomain(*d)) {
			stop = true
		}
	})
}

// RangeSorted calls fn with a copy of every domain in name order until fn
// returns false. It is Domains without the slice of copies: it holds one
// pointer per domain for the order and copies one record at a time, so a
// listing of a large catalog does not copy the catalog.
func (s *State) RangeSorted(fn func(Domain) bool) {
	for _, d := range s.sortedRecords() {
		if !fn(cloneDomain(*d)) {
			return
		}
	}
}

// RunsPacedDomain reports whether any paced domain is running: whether any
// domain has a clock authority to keep. It takes constant time, whatever
// the number of domains.
func (s *State) RunsPacedDomain() bool { return s.pacedRunning > 0 }

// Node returns the registered incarnation of the named node.
func (s *State) Node(name string) (RegisteredNode, bool) {
	n, ok := s.nodes[name]
	return n, ok
}

// Nodes returns every registered node, sorted by name.
func (s *State) Nodes() []RegisteredNode {
	out := make([]RegisteredNode, 0, len(s.nodes))
	for _, name := range sortedKeys(s.nodes) {
		out = append(out, s.nodes[name])
	}
	return out
}

// Incarnations returns the registered node incarnations sorted by name: the
// available set when every registered node is considered live (for example
// the embedded single-node catalog).
func (s *State) Incarnations() []NodeIncarnation {
	out := make([]NodeIncarnation, 0, len(s.nodes))
	for _, n := range s.Nodes() {
		out = append(out, n.NodeIncarnation())
	}
	return out
}

// VoterNames maps Raft server IDs to the names of the nodes registered with
// them, sorted; IDs that no registered node uses are left out. It turns a
// Raft configuration into the voters argument of SelectAuthority.
func (s *State) VoterNames(raftIDs []string) []string {
	want := make(map[string]bool, len(raftIDs))
	for _, id := range raftIDs {
		want[id] = true
	}
	var out []string
	for _, n := range s.Nodes() {
		if want[n.RaftID] {
			out = append(out, n.Name)
		}
	}
	return out
}

// Clone returns a State equal to s that evolves independently of it, in
// constant time. It gives up s's right to write its table in place (so
// s's next change copies what it touches) and writes nothing to a state
// that has not been applied to since it was created or last cloned: any
// number of goroutines may clone a published clone at once.
func (s *State) Clone() *State {
	if s.own != (tableOwnership{}) || s.fresh != nil {
		s.own, s.fresh = tableOwnership{}, nil
	}
	c := *s
	c.scratch = nil
	return &c
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}
