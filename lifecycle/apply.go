package lifecycle

import "math"

// Result is the outcome of applying one command. Revision is the catalog
// revision after the command: one more than before when Changed, unchanged
// for a no-op or a refusal. Failure is the typed domain error of a refused
// command (which leaves the state untouched); it survives JSON encoding.
type Result struct {
	Revision uint64 `json:"revision"`
	Changed  bool   `json:"changed"`
	Failure  *Error `json:"failure,omitempty"`
}

// Err returns Failure as an error, or nil on success.
func (r Result) Err() error {
	if r.Failure == nil {
		return nil
	}
	return r.Failure
}

// Apply applies cmd to s deterministically: the same state and command give
// the same result and the same next state on every replica. A command that
// changes the state advances the catalog revision by exactly one (a whole
// transaction included) and stamps the changed domain with it; a no-op (IF
// NOT EXISTS on an existing domain, IF EXISTS on a missing one, an unchanged
// placement, a repeated registration, a reassignment to the current
// identity) succeeds without advancing it. A refused command returns its
// typed error in the Result and leaves s untouched. Apply never panics and
// never reads a clock.
func (s *State) Apply(cmd Command) Result {
	changed, err := s.apply(cmd)
	if err != nil {
		return Result{Revision: s.revision, Failure: err}
	}
	if changed {
		s.revision++
	}
	return Result{Revision: s.revision, Changed: changed}
}

func (s *State) apply(cmd Command) (bool, *Error) {
	if err := cmd.validate(); err != nil {
		return false, err
	}
	if s.revision == math.MaxUint64 {
		return false, errInvalid("", "catalog revision %d is exhausted; no further change can be committed", s.revision)
	}
	next := s.revision + 1
	switch cmd.Op {
	case OpCreateDomain:
		return s.createDomain(*cmd.CreateDomain, next)
	case OpAlterPlacement:
		p := cmd.AlterPlacement
		return s.onDomain(p.Domain, func(d *Domain) (bool, *Error) {
			return alterPlacement(d, p.Placement, next)
		})
	case OpDropDomain:
		return s.dropDomain(*cmd.DropDomain)
	case OpStart:
		return s.onDomain(cmd.Start.Domain, func(d *Domain) (bool, *Error) {
			return s.start(d, cmd.Start.Resolved, next)
		})
	case OpStop:
		return s.onDomain(cmd.Stop.Domain, func(d *Domain) (bool, *Error) {
			return stop(d, next)
		})
	case OpTransaction:
		return s.onDomain(cmd.Transaction.Domain, func(d *Domain) (bool, *Error) {
			return s.transaction(d, cmd.Transaction.Steps, next)
		})
	case OpRegisterNode:
		return s.registerNode(*cmd.RegisterNode, next), nil
	case OpDeregisterNode:
		return s.deregisterNode(*cmd.DeregisterNode)
	case OpReassignAuthority:
		r := cmd.ReassignAuthority
		return s.onDomain(r.Domain, func(d *Domain) (bool, *Error) {
			return s.reassign(d, *r, next)
		})
	case OpRestore:
		return s.restore(*cmd.Restore, next)
	case OpCordonNode:
		return s.cordonNode(*cmd.CordonNode)
	}
	return false, errInvalid("", "unknown command op %q", cmd.Op)
}

// onDomain runs fn on a copy of the named domain and stores the copy only
// if fn succeeds and reports a change: every domain transition is
// all-or-nothing. A stored record that clones may share is never written:
// the copy becomes a new record. Only the record s stored last, when no
// clone was taken since (s.fresh, which nothing else holds), is
// overwritten in place, so a batch that changes one domain many times
// allocates one record, not one per command. The copy is shallow:
// transitions replace Mapping, never write through it.
func (s *State) onDomain(name string, fn func(*Domain) (bool, *Error)) (bool, *Error) {
	cur, ok := s.lookup(name)
	if !ok {
		return false, errDomainNotFound(name)
	}
	if cur == s.fresh {
		if s.scratch == nil {
			s.scratch = new(Domain)
		}
		*s.scratch = *cur
		changed, err := fn(s.scratch)
		if err != nil || !changed {
			return false, err
		}
		if keepsAuthority(cur) {
			s.pacedRunning--
		}
		*cur = *s.scratch
		if keepsAuthority(cur) {
			s.pacedRunning++
		}
		return true, nil
	}
	d := new(Domain)
	*d = *cur
	changed, err := fn(d)
	if err != nil || !changed {
		return false, err
	}
	s.putRecord(d)
	s.fresh = d
	return true, nil
}

func (s *State) createDomain(c CreateDomain, rev uint64) (bool, *Error) {
	if _, ok := s.lookup(c.Name); ok {
		if c.IfNotExists {
			return false, nil
		}
		return false, errDomainExists(c.Name)
	}
	switch {
	case c.Pace == Paced && c.Period == 0:
		return false, newError(CodeInvalidPeriod, c.Name,
			"domain '%s': PERIOD must be positive; give a period such as WITH PERIOD 1s", c.Name)
	case c.Pace == Unpaced && (c.Period != 0 || c.Skew != 0):
		return false, newError(CodeInvalidPeriod, c.Name,
			"domain '%s': an unpaced domain takes no PERIOD or SKEW; use CREATE PACED DOMAIN for a clock", c.Name)
	}
	s.putRecord(&Domain{
		Name:      c.Name,
		Pace:      c.Pace,
		Period:    c.Period,
		Skew:      c.Skew,
		Placement: c.Placement,
		Status:    Stopped,
		Revision:  rev,
	})
	return true, nil
}

func (s *State) dropDomain(c DropDomain) (bool, *Error) {
	d, ok := s.lookup(c.Name)
	switch {
	case !ok && c.IfExists:
		return false, nil
	case !ok:
		return false, errDomainNotFound(c.Name)
	case d.Running():
		return false, errDomainRunning(c.Name)
	}
	s.removeRecord(c.Name)
	return true, nil
}

func alterPlacement(d *Domain, p Placement, rev uint64) (bool, *Error) {
	if d.Placement == p {
		return false, nil
	}
	d.Placement = p
	d.Revision = rev
	return true, nil
}

// start establishes the next generation. It checks the authority against
// the registry so that a command resolved against a stale view cannot name
// an incarnation that is no longer registered.
func (s *State) start(d *Domain, r ResolvedStart, rev uint64) (bool, *Error) {
	if d.Running() {
		return false, errAlreadyRunning(d.Name)
	}
	if d.Generation == math.MaxUint64 {
		return false, errInvalid(d.Name, "domain '%s': lifecycle generation %d is exhausted; drop and create the domain again", d.Name, d.Generation)
	}
	switch {
	case d.Pace == Paced && r.Authority == nil:
		return false, errNoLiveVoter(d.Name)
	case d.Pace == Unpaced && r.Authority != nil:
		return false, errInvalid(d.Name, "domain '%s' is unpaced and has no clock authority; resolve the start without one", d.Name)
	}
	d.Status = Running
	d.Generation++
	d.LastStart = r.Point
	d.Revision = rev
	if d.Pace == Paced {
		if err := s.checkRegistered(d.Name, *r.Authority); err != nil {
			return false, err
		}
		fence, err := advanceFence(d, *r.Authority)
		if err != nil {
			return false, err
		}
		m := r.Point.Mapping()
		d.Mapping = &m
		d.Authority = fence
	}
	return true, nil
}

// stop ends the generation: the mapping goes and a paced domain's fence
// becomes unassigned at the next authority revision. The generation and
// the last start point stay.
func stop(d *Domain, rev uint64) (bool, *Error) {
	if !d.Running() {
		return false, errAlreadyStopped(d.Name)
	}
	d.Status = Stopped
	d.Mapping = nil
	d.Revision = rev
	if d.Pace == Paced {
		fence, err := advanceFence(d, Identity{})
		if err != nil {
			return false, err
		}
		d.Authority = fence
	}
	return true, nil
}

func (s *State) transaction(d *Domain, steps []Step, rev uint64) (bool, *Error) {
	changed := false
	for i, step := range steps {
		var ok bool
		var err *Error
		switch step.Op {
		case StepStart:
			ok, err = s.start(d, *step.Start, rev)
		case StepStop:
			ok, err = stop(d, rev)
		case StepAlterPlacement:
			ok, err = alterPlacement(d, *step.Placement, rev)
		default:
			err = errInvalid(d.Name, "unknown step op %q", step.Op)
		}
		if err != nil {
			return false, inStep(err, i, step.Op)
		}
		changed = changed || ok
	}
	return changed, nil
}

func (s *State) reassign(d *Domain, r ReassignAuthority, rev uint64) (bool, *Error) {
	switch {
	case d.Generation != r.ExpectedGeneration:
		return false, errConflict(d, "expected generation %d, found %d", r.ExpectedGeneration, d.Generation)
	case d.Pace != Paced:
		return false, errConflict(d, "the domain is unpaced and has no clock authority")
	case !d.Running():
		return false, errConflict(d, "the domain is stopped")
	case d.Authority != r.ExpectedFence:
		return false, errConflict(d, "expected fence %s, found %s", r.ExpectedFence, d.Authority)
	}
	target := Identity{}
	if r.Authority != nil {
		target = *r.Authority
		if err := s.checkRegistered(d.Name, target); err != nil {
			return false, err
		}
	}
	if target == d.Authority.Identity() {
		return false, nil
	}
	fence, err := advanceFence(d, target)
	if err != nil {
		return false, err
	}
	d.Authority = fence
	d.Revision = rev
	return true, nil
}

func advanceFence(d *Domain, id Identity) (AuthorityFence, *Error) {
	if d.Authority.Revision == math.MaxUint64 {
		return AuthorityFence{}, errInvalid(d.Name, "domain '%s': authority revision %d is exhausted; drop and create the domain again", d.Name, d.Authority.Revision)
	}
	return AuthorityFence{Node: id.Node, Incarnation: id.Incarnation, Revision: d.Authority.Revision + 1}, nil
}

func errConflict(d *Domain, format string, args ...any) *Error {
	e := newError(CodeAuthorityConflict, d.Name, format, args...)
	e.Message = "authority of domain '" + d.Name + "' was not changed: " + e.Message +
		"; recompute the reassignment from the current catalog"
	return e
}

func (s *State) checkRegistered(domain string, id Identity) *Error {
	n, ok := s.nodes[id.Node]
	if !ok {
		return newError(CodeUnknownNode, domain,
			"node '%s' is not registered and cannot own the clock for domain '%s'; register the node first", id.Node, domain)
	}
	if n.Incarnation != id.Incarnation {
		return newError(CodeUnknownNode, domain,
			"node '%s' incarnation %d is not registered (current incarnation %d) and cannot own the clock for domain '%s'",
			id.Node, id.Incarnation, n.Incarnation, domain)
	}
	return nil
}

func (s *State) registerNode(r RegisterNode, rev uint64) bool {
	n := RegisteredNode{Name: r.Name, Incarnation: r.Incarnation, RaftID: r.RaftID, RaftAddr: r.RaftAddr, APIAddr: r.APIAddr, Registered: rev}
	if cur, ok := s.nodes[r.Name]; ok {
		// The maintenance mark belongs to the name: a restart keeps it.
		n.Cordoned = cur.Cordoned
		if cur.Incarnation == r.Incarnation {
			// Same incarnation: keep its registration order, update addresses.
			n.Registered = cur.Registered
			if cur == n {
				return false
			}
		}
	}
	s.nodes = withNode(s.nodes, r.Name, &n)
	return true
}

func (s *State) deregisterNode(r DeregisterNode) (bool, *Error) {
	cur, ok := s.nodes[r.Name]
	if !ok {
		return false, newError(CodeUnknownNode, "", "node '%s' is not registered", r.Name)
	}
	if cur.Incarnation != r.Incarnation {
		return false, newError(CodeUnknownNode, "",
			"node '%s' incarnation %d is not registered (current incarnation %d); it was not removed", r.Name, r.Incarnation, cur.Incarnation)
	}
	s.nodes = withNode(s.nodes, r.Name, nil)
	return true, nil
}

func (s *State) cordonNode(c CordonNode) (bool, *Error) {
	cur, ok := s.nodes[c.Name]
	if !ok {
		return false, newError(CodeUnknownNode, "",
			"node '%s' is not registered; SHOW CLUSTER STATUS lists the nodes that can be cordoned", c.Name)
	}
	if cur.Cordoned == c.Cordoned {
		return false, nil
	}
	cur.Cordoned = c.Cordoned
	s.nodes = withNode(s.nodes, c.Name, &cur)
	return true, nil
}

// withNode returns a copy of nodes with name set to n, or removed when n is
// nil: a stored registry map is shared by clones and never written.
func withNode(nodes map[string]RegisteredNode, name string, n *RegisteredNode) map[string]RegisteredNode {
	out := make(map[string]RegisteredNode, len(nodes)+1)
	for k, v := range nodes {
		if k != name {
			out[k] = v
		}
	}
	if n != nil {
		out[name] = *n
	}
	return out
}
