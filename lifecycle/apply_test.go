package lifecycle

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
)

const (
	sec  = int64(1_000_000_000)
	utc0 = int64(1_767_225_600) * sec // 2026-01-01T00:00:00Z
)

var (
	nodeA = Identity{Node: "node-a", Incarnation: 11}
	nodeB = Identity{Node: "node-b", Incarnation: 22}
)

func createPaced(name string) Command {
	return Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: name, Pace: Paced, Period: uint64(sec), Skew: 100_000_000}}
}

func createUnpaced(name string) Command {
	return Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: name, Pace: Unpaced}}
}

func register(id Identity) Command {
	return Command{Op: OpRegisterNode, RegisterNode: &RegisterNode{
		Name: id.Node, Incarnation: id.Incarnation, RaftID: "raft-" + id.Node, RaftAddr: id.Node + ":7000", APIAddr: id.Node + ":8000",
	}}
}

func point(mode StartMode, logical, wall int64, rate float64) StartPoint {
	return StartPoint{Mode: mode, LogicalStart: logical, Rate: rate, WallStartedAt: wall}
}

func startCmd(domain string, p StartPoint, auth *Identity) Command {
	return Command{Op: OpStart, Start: &Start{Domain: domain, Resolved: ResolvedStart{Point: p, Authority: auth}}}
}

func stopCmd(domain string) Command { return Command{Op: OpStop, Stop: &Stop{Domain: domain}} }

func alterCmd(domain string, p Placement) Command {
	return Command{Op: OpAlterPlacement, AlterPlacement: &AlterPlacement{Domain: domain, Placement: p}}
}

func dropCmd(domain string, ifExists bool) Command {
	return Command{Op: OpDropDomain, DropDomain: &DropDomain{Name: domain, IfExists: ifExists}}
}

func reassignCmd(domain string, gen uint64, fence AuthorityFence, to *Identity) Command {
	return Command{Op: OpReassignAuthority, ReassignAuthority: &ReassignAuthority{Domain: domain, ExpectedGeneration: gen, ExpectedFence: fence, Authority: to}}
}

func ptr[T any](v T) *T { return &v }

// mustApply applies each command and fails on any refusal.
func mustApply(t testing.TB, s *State, cmds ...Command) {
	t.Helper()
	for _, c := range cmds {
		r := s.Apply(c)
		require.NoError(t, r.Err(), "apply %s", c.Op)
	}
}

// baseState: two registered nodes, a stopped paced "prod", a running paced
// "live" owned by node-a, a stopped unpaced "arch" and a running unpaced
// "web".
func baseState(t testing.TB) *State {
	s := NewState()
	mustApply(t, s,
		register(nodeA), register(nodeB),
		createPaced("prod"), createPaced("live"), createUnpaced("arch"), createUnpaced("web"),
		startCmd("live", point(StartNow, utc0, utc0, 60), &nodeA),
		startCmd("web", point(StartNow, utc0, utc0, 1), nil),
	)
	return s
}

func TestApplyTransitions(t *testing.T) {
	pacedStart := point(StartAt, utc0-5*sec, utc0, 2.5)
	tests := []struct {
		name    string
		cmd     Command
		want    error // nil: success
		changed bool
		check   func(t *testing.T, before, after *State)
	}{
		{name: "create paced", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Paced, Period: 1, Skew: math.MaxUint64, Placement: RequireColocation}}, changed: true,
			check: func(t *testing.T, before, after *State) {
				d, ok := after.Domain("new")
				require.True(t, ok)
				require.Equal(t, Domain{Name: "new", Pace: Paced, Period: 1, Skew: math.MaxUint64, Placement: RequireColocation, Status: Stopped, Revision: after.Revision()}, d)
			}},
		{name: "create unpaced", cmd: createUnpaced("new"), changed: true,
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("new")
				require.Equal(t, Unpaced, d.Pace)
				require.Equal(t, Neutral, d.Placement)
				require.Zero(t, d.Generation)
			}},
		{name: "create duplicate", cmd: createPaced("prod"), want: ErrDomainExists},
		{name: "create duplicate of other pace", cmd: createUnpaced("prod"), want: ErrDomainExists},
		{name: "create if not exists on existing keeps definition", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "arch", Pace: Paced, Period: 5, IfNotExists: true}},
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("arch")
				require.Equal(t, Unpaced, d.Pace)
			}},
		{name: "create if not exists on new", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Unpaced, IfNotExists: true}}, changed: true},
		{name: "create paced period 0", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Paced, Period: 0}}, want: ErrInvalidPeriod},
		{name: "create paced period max", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Paced, Period: math.MaxUint64}}, changed: true},
		{name: "create unpaced with period", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Unpaced, Period: 1}}, want: ErrInvalidPeriod},
		{name: "create unpaced with skew", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "new", Pace: Unpaced, Skew: 1}}, want: ErrInvalidPeriod},
		{name: "create empty name", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{}}, want: ErrInvalidCommand},
		{name: "create pace out of range", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "x", Pace: 2, Period: 1}}, want: ErrInvalidCommand},
		{name: "create placement out of range", cmd: Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "x", Placement: 4}}, want: ErrInvalidCommand},

		{name: "alter placement", cmd: alterCmd("prod", SuggestSeparation), changed: true,
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("prod")
				require.Equal(t, SuggestSeparation, d.Placement)
				require.Equal(t, after.Revision(), d.Revision)
			}},
		{name: "alter placement of running domain", cmd: alterCmd("live", PreferColocation), changed: true},
		{name: "alter placement unchanged", cmd: alterCmd("prod", Neutral)},
		{name: "alter placement missing", cmd: alterCmd("nope", Neutral), want: ErrDomainNotFound},

		{name: "drop stopped", cmd: dropCmd("prod", false), changed: true,
			check: func(t *testing.T, before, after *State) {
				_, ok := after.Domain("prod")
				require.False(t, ok)
			}},
		{name: "drop running paced", cmd: dropCmd("live", false), want: ErrDomainRunning},
		{name: "drop running unpaced", cmd: dropCmd("web", true), want: ErrDomainRunning},
		{name: "drop missing", cmd: dropCmd("nope", false), want: ErrDomainNotFound},
		{name: "drop missing if exists", cmd: dropCmd("nope", true)},

		{name: "start paced", cmd: startCmd("prod", pacedStart, &nodeB), changed: true,
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("prod")
				require.Equal(t, Running, d.Status)
				require.Equal(t, uint64(1), d.Generation)
				require.Equal(t, pacedStart, d.LastStart)
				require.Equal(t, &clock.Mapping{WallStartedAt: utc0, LogicalStart: utc0 - 5*sec, Rate: 2.5}, d.Mapping)
				require.Equal(t, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 1}, d.Authority)
			}},
		{name: "start unpaced", cmd: startCmd("arch", point(StartResume, utc0, utc0, 1), nil), changed: true,
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("arch")
				require.Equal(t, Running, d.Status)
				require.Equal(t, uint64(1), d.Generation)
				require.Nil(t, d.Mapping)
				require.Equal(t, AuthorityFence{}, d.Authority)
			}},
		{name: "start running", cmd: startCmd("live", pacedStart, &nodeA), want: ErrAlreadyRunning},
		{name: "start missing", cmd: startCmd("nope", pacedStart, &nodeA), want: ErrDomainNotFound},
		{name: "start paced without authority", cmd: startCmd("prod", pacedStart, nil), want: ErrNoLiveVoter},
		{name: "start unpaced with authority", cmd: startCmd("arch", pacedStart, &nodeA), want: ErrInvalidCommand},
		{name: "start unregistered authority", cmd: startCmd("prod", pacedStart, &Identity{Node: "node-z", Incarnation: 1}), want: ErrUnknownNode},
		{name: "start stale incarnation", cmd: startCmd("prod", pacedStart, &Identity{Node: "node-a", Incarnation: 12}), want: ErrUnknownNode},
		{name: "start rate 0", cmd: startCmd("prod", point(StartNow, 0, 0, 0), &nodeA), want: ErrInvalidCommand},
		{name: "start rate negative", cmd: startCmd("prod", point(StartNow, 0, 0, -1), &nodeA), want: ErrInvalidCommand},
		{name: "start rate inf", cmd: startCmd("prod", point(StartNow, 0, 0, math.Inf(1)), &nodeA), want: ErrInvalidCommand},
		{name: "start rate nan", cmd: startCmd("prod", point(StartNow, 0, 0, math.NaN()), &nodeA), want: ErrInvalidCommand},
		{name: "start rate smallest subnormal", cmd: startCmd("prod", point(StartNow, math.MinInt64, math.MinInt64, 5e-324), &nodeA), changed: true},
		{name: "start rate max", cmd: startCmd("prod", point(StartNow, math.MaxInt64, math.MaxInt64, math.MaxFloat64), &nodeA), changed: true},
		{name: "start mode out of range", cmd: startCmd("prod", point(3, 0, 0, 1), &nodeA), want: ErrInvalidCommand},
		{name: "start authority zero incarnation", cmd: startCmd("prod", pacedStart, &Identity{Node: "node-a"}), want: ErrInvalidCommand},

		{name: "stop paced", cmd: stopCmd("live"), changed: true,
			check: func(t *testing.T, before, after *State) {
				b, _ := before.Domain("live")
				d, _ := after.Domain("live")
				require.Equal(t, Stopped, d.Status)
				require.Nil(t, d.Mapping)
				require.Equal(t, b.Generation, d.Generation)
				require.Equal(t, b.LastStart, d.LastStart)
				require.Equal(t, AuthorityFence{Revision: b.Authority.Revision + 1}, d.Authority)
			}},
		{name: "stop unpaced", cmd: stopCmd("web"), changed: true,
			check: func(t *testing.T, before, after *State) {
				d, _ := after.Domain("web")
				require.Equal(t, Stopped, d.Status)
				require.Equal(t, AuthorityFence{}, d.Authority)
				require.Equal(t, uint64(1), d.Generation)
			}},
		{name: "stop stopped", cmd: stopCmd("prod"), want: ErrAlreadyStopped},
		{name: "stop never started unpaced", cmd: stopCmd("arch"), want: ErrAlreadyStopped},
		{name: "stop missing", cmd: stopCmd("nope"), want: ErrDomainNotFound},

		{name: "empty command", cmd: Command{}, want: ErrInvalidCommand},
		{name: "unknown op", cmd: Command{Op: "pause", Stop: &Stop{Domain: "live"}}, want: ErrInvalidCommand},
		{name: "payload mismatch", cmd: Command{Op: OpStart, Stop: &Stop{Domain: "live"}}, want: ErrInvalidCommand},
		{name: "two payloads", cmd: Command{Op: OpStop, Stop: &Stop{Domain: "live"}, DropDomain: &DropDomain{Name: "live"}}, want: ErrInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseState(t)
			before := s.Clone()
			r := s.Apply(tc.cmd)
			if tc.want != nil {
				require.ErrorIs(t, r.Err(), tc.want)
				require.False(t, r.Changed)
				requireSameState(t, before, s, "a refused command must leave the state untouched")
				require.Equal(t, before.Revision(), r.Revision)
				return
			}
			require.NoError(t, r.Err())
			require.Equal(t, tc.changed, r.Changed)
			if tc.changed {
				require.Equal(t, before.Revision()+1, s.Revision())
			} else {
				requireSameState(t, before, s, "a no-op must leave the state untouched")
			}
			require.Equal(t, s.Revision(), r.Revision)
			for _, d := range s.Domains() {
				require.NoError(t, validateDomain(d))
			}
			if tc.check != nil {
				tc.check(t, before, s)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	s := baseState(t)
	tests := []struct {
		cmd  Command
		want string
	}{
		{createPaced("prod"), "domain 'prod' already exists; use CREATE DOMAIN IF NOT EXISTS or choose another name"},
		{stopCmd("nope"), "domain 'nope' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN nope first"},
		{dropCmd("live", false), "domain 'live' is running; stop it first with STOP, then DROP it"},
		{startCmd("live", point(StartNow, 0, 0, 1), &nodeA), "domain 'live' is already running; STOP it before starting a new generation"},
		{stopCmd("prod"), "domain 'prod' is already stopped; START it to establish a new generation"},
		{startCmd("prod", point(StartNow, 0, 0, 1), nil), "no live voter is available to own the clock for domain 'prod'; wait for a voting node to become available and retry"},
		{reassignCmd("live", 9, AuthorityFence{}, nil), "authority of domain 'live' was not changed: expected generation 9, found 1; recompute the reassignment from the current catalog"},
	}
	for _, tc := range tests {
		t.Run(string(tc.cmd.Op), func(t *testing.T) {
			r := s.Apply(tc.cmd)
			require.EqualError(t, r.Err(), tc.want)
			e := AsError(r.Err())
			require.NotNil(t, e)
			require.NotEmpty(t, e.Domain)
		})
	}
}

func TestGenerationsAndRevisions(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), register(nodeB), createPaced("prod"), createUnpaced("arch"))
	require.Equal(t, uint64(4), s.Revision())

	type want struct {
		rev    uint64
		status Status
		gen    uint64
		fence  AuthorityFence
		mapped bool
	}
	steps := []struct {
		cmd  Command
		want want
	}{
		{startCmd("prod", point(StartNow, utc0, utc0, 1), &nodeA), want{5, Running, 1, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}, true}},
		{stopCmd("prod"), want{6, Stopped, 1, AuthorityFence{Revision: 2}, false}},
		{startCmd("prod", point(StartResume, utc0, utc0+sec, 1), &nodeB), want{7, Running, 2, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 3}, true}},
		{reassignCmd("prod", 2, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 3}, &nodeA), want{8, Running, 2, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 4}, true}},
		{reassignCmd("prod", 2, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 4}, nil), want{9, Running, 2, AuthorityFence{Revision: 5}, true}},
		{stopCmd("prod"), want{10, Stopped, 2, AuthorityFence{Revision: 6}, false}},
		{startCmd("prod", point(StartAt, 0, utc0+2*sec, 1e9), &nodeA), want{11, Running, 3, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 7}, true}},
	}
	for i, st := range steps {
		r := s.Apply(st.cmd)
		require.NoError(t, r.Err(), "step %d", i)
		d, _ := s.Domain("prod")
		got := want{r.Revision, d.Status, d.Generation, d.Authority, d.Mapping != nil}
		require.Equal(t, st.want, got, "step %d", i)
		require.Equal(t, r.Revision, d.Revision, "step %d: domain stamped with the catalog revision", i)
		if d.Mapping != nil {
			require.Equal(t, d.LastStart.Mapping(), *d.Mapping)
		}
	}

	// Unpaced generations advance too, without any fence movement.
	mustApply(t, s, startCmd("arch", point(StartNow, 1, 1, 1), nil), stopCmd("arch"), startCmd("arch", point(StartNow, 2, 2, 1), nil))
	d, _ := s.Domain("arch")
	require.Equal(t, uint64(2), d.Generation)
	require.Equal(t, AuthorityFence{}, d.Authority)
	require.Equal(t, uint64(14), s.Revision())
	other, _ := s.Domain("prod")
	require.Equal(t, uint64(11), other.Revision, "changing one domain does not stamp another")
}

func TestReassignCompareAndSet(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), register(nodeB), createPaced("live"), createUnpaced("web"), createPaced("idle"),
		startCmd("live", point(StartNow, utc0, utc0, 1), &nodeA),
		startCmd("web", point(StartNow, utc0, utc0, 1), nil))
	cur := AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}
	tests := []struct {
		name string
		cmd  Command
		want error
		// fence after success; zero when refused or no-op
		fence   AuthorityFence
		changed bool
	}{
		{"move", reassignCmd("live", 1, cur, &nodeB), nil, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 2}, true},
		{"revoke", reassignCmd("live", 1, cur, nil), nil, AuthorityFence{Revision: 2}, true},
		{"same identity is a no-op", reassignCmd("live", 1, cur, &nodeA), nil, cur, false},
		{"stale generation below", reassignCmd("live", 0, cur, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale generation above", reassignCmd("live", 2, cur, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale fence revision below", reassignCmd("live", 1, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 0}, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale fence revision above", reassignCmd("live", 1, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 2}, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale fence node", reassignCmd("live", 1, AuthorityFence{Node: "node-b", Incarnation: 11, Revision: 1}, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale fence incarnation", reassignCmd("live", 1, AuthorityFence{Node: "node-a", Incarnation: 12, Revision: 1}, &nodeB), ErrAuthorityConflict, cur, false},
		{"stale fence unassigned", reassignCmd("live", 1, AuthorityFence{Revision: 1}, &nodeB), ErrAuthorityConflict, cur, false},
		{"unpaced", reassignCmd("web", 1, AuthorityFence{}, &nodeB), ErrAuthorityConflict, AuthorityFence{}, false},
		{"stopped", reassignCmd("idle", 0, AuthorityFence{}, &nodeB), ErrAuthorityConflict, AuthorityFence{}, false},
		{"missing", reassignCmd("nope", 1, cur, &nodeB), ErrDomainNotFound, AuthorityFence{}, false},
		{"unregistered target", reassignCmd("live", 1, cur, &Identity{Node: "node-z", Incarnation: 5}), ErrUnknownNode, cur, false},
		{"stale target incarnation", reassignCmd("live", 1, cur, &Identity{Node: "node-b", Incarnation: 21}), ErrUnknownNode, cur, false},
		{"half fence", reassignCmd("live", 1, AuthorityFence{Node: "node-a", Revision: 1}, nil), ErrInvalidCommand, cur, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := s.Clone()
			r := c.Apply(tc.cmd)
			require.ErrorIs(t, r.Err(), tc.want)
			require.Equal(t, tc.changed, r.Changed)
			if tc.want != nil || !tc.changed {
				requireSameState(t, s, c)
			}
			if d, ok := c.Domain(tc.cmd.ReassignAuthority.Domain); ok {
				require.Equal(t, tc.fence, d.Authority)
			}
		})
	}

	// A retried reassignment whose first attempt committed is refused, so
	// an unknown outcome can be retried safely.
	first := reassignCmd("live", 1, cur, &nodeB)
	require.True(t, s.Apply(first).Changed)
	require.ErrorIs(t, s.Apply(first).Err(), ErrAuthorityConflict)

	// Revoke of an unassigned fence is a quiet no-op.
	mustApply(t, s, reassignCmd("live", 1, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 2}, nil))
	r := s.Apply(reassignCmd("live", 1, AuthorityFence{Revision: 3}, nil))
	require.NoError(t, r.Err())
	require.False(t, r.Changed)
}

func TestTransactionAllOrNothing(t *testing.T) {
	p1 := point(StartNow, utc0, utc0, 60)
	p2 := point(StartResume, utc0+3*sec, utc0, 60)
	start := func(p StartPoint, id *Identity) Step {
		return Step{Op: StepStart, Start: &ResolvedStart{Point: p, Authority: id}}
	}
	tx := func(domain string, steps ...Step) Command {
		return Command{Op: OpTransaction, Transaction: &Transaction{Domain: domain, Steps: steps}}
	}
	tests := []struct {
		name    string
		cmd     Command
		want    error
		step    int
		changed bool
		check   func(t *testing.T, d Domain)
	}{
		{name: "start alter", cmd: tx("prod", start(p1, &nodeA), Step{Op: StepAlterPlacement, Placement: ptr(RequireColocation)}), changed: true,
			check: func(t *testing.T, d Domain) {
				require.Equal(t, Running, d.Status)
				require.Equal(t, uint64(1), d.Generation)
				require.Equal(t, RequireColocation, d.Placement)
				require.Equal(t, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}, d.Authority)
			}},
		{name: "stop start on running", cmd: tx("live", Step{Op: StepStop}, start(p2, &nodeB)), changed: true,
			check: func(t *testing.T, d Domain) {
				require.Equal(t, uint64(2), d.Generation)
				require.Equal(t, p2, d.LastStart)
				require.Equal(t, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 3}, d.Authority, "stop and start each advance the fence")
			}},
		{name: "start stop start", cmd: tx("prod", start(p1, &nodeA), Step{Op: StepStop}, start(p2, &nodeB)), changed: true,
			check: func(t *testing.T, d Domain) {
				require.Equal(t, uint64(2), d.Generation)
				require.Equal(t, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 3}, d.Authority)
			}},
		{name: "empty transaction", cmd: tx("prod")},
		{name: "alter to current value only", cmd: tx("prod", Step{Op: StepAlterPlacement, Placement: ptr(Neutral)})},
		{name: "second step fails", cmd: tx("prod", start(p1, &nodeA), start(p2, &nodeA)), want: ErrAlreadyRunning, step: 2},
		{name: "last step fails after changes", cmd: tx("prod", Step{Op: StepAlterPlacement, Placement: ptr(PreferColocation)}, start(p1, &nodeA), Step{Op: StepStop}, Step{Op: StepStop}), want: ErrAlreadyStopped, step: 4},
		{name: "first step fails", cmd: tx("prod", Step{Op: StepStop}), want: ErrAlreadyStopped, step: 1},
		{name: "unregistered authority", cmd: tx("prod", start(p1, &Identity{Node: "ghost", Incarnation: 1})), want: ErrUnknownNode, step: 1},
		{name: "missing domain", cmd: tx("nope", Step{Op: StepStop}), want: ErrDomainNotFound},
		{name: "start step without payload", cmd: tx("prod", Step{Op: StepStart}), want: ErrInvalidCommand, step: 1},
		{name: "stop step with payload", cmd: tx("prod", Step{Op: StepStop, Placement: ptr(Neutral)}), want: ErrInvalidCommand, step: 1},
		{name: "alter step without payload", cmd: tx("prod", Step{Op: StepAlterPlacement}), want: ErrInvalidCommand, step: 1},
		{name: "alter step out of range", cmd: tx("prod", Step{Op: StepAlterPlacement, Placement: ptr(Placement(9))}), want: ErrInvalidCommand, step: 1},
		{name: "unknown step", cmd: tx("prod", Step{Op: "drop"}), want: ErrInvalidCommand, step: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseState(t)
			before := s.Clone()
			r := s.Apply(tc.cmd)
			require.ErrorIs(t, r.Err(), tc.want)
			if tc.want != nil {
				requireSameState(t, before, s)
				require.Equal(t, tc.step, AsError(r.Err()).Step)
				return
			}
			require.Equal(t, tc.changed, r.Changed)
			if !tc.changed {
				requireSameState(t, before, s)
				return
			}
			require.Equal(t, before.Revision()+1, s.Revision(), "a transaction is one revision")
			d, _ := s.Domain(tc.cmd.Transaction.Domain)
			require.Equal(t, s.Revision(), d.Revision)
			require.NoError(t, validateDomain(d))
			tc.check(t, d)
		})
	}
}

func TestNodeRegistry(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA))
	n, ok := s.Node("node-a")
	require.True(t, ok)
	require.Equal(t, RegisteredNode{Name: "node-a", Incarnation: 11, RaftID: "raft-node-a", RaftAddr: "node-a:7000", APIAddr: "node-a:8000", Registered: 1}, n)

	// Retrying the same registration is a no-op.
	r := s.Apply(register(nodeA))
	require.NoError(t, r.Err())
	require.False(t, r.Changed)

	// New addresses for the same incarnation keep its registration order.
	moved := register(nodeA)
	moved.RegisterNode.APIAddr = "10.0.0.1:8000"
	require.True(t, s.Apply(moved).Changed)
	n, _ = s.Node("node-a")
	require.Equal(t, uint64(1), n.Registered)
	require.Equal(t, "10.0.0.1:8000", n.APIAddr)

	// A restart registers a fresh incarnation, which is newer.
	restarted := Identity{Node: "node-a", Incarnation: 99}
	require.True(t, s.Apply(register(restarted)).Changed)
	n, _ = s.Node("node-a")
	require.Equal(t, uint64(99), n.Incarnation)
	require.Equal(t, uint64(3), n.Registered)

	tests := []struct {
		name string
		cmd  Command
		want error
	}{
		{"register empty name", Command{Op: OpRegisterNode, RegisterNode: &RegisterNode{Incarnation: 1}}, ErrInvalidCommand},
		{"register zero incarnation", Command{Op: OpRegisterNode, RegisterNode: &RegisterNode{Name: "n"}}, ErrInvalidCommand},
		{"deregister old incarnation", Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-a", Incarnation: 11}}, ErrUnknownNode},
		{"deregister missing", Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-z", Incarnation: 1}}, ErrUnknownNode},
		{"deregister zero incarnation", Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-a"}}, ErrInvalidCommand},
		{"deregister empty name", Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Incarnation: 1}}, ErrInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := s.Clone()
			require.ErrorIs(t, c.Apply(tc.cmd).Err(), tc.want)
			requireSameState(t, s, c)
		})
	}

	require.True(t, s.Apply(Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-a", Incarnation: 99}}).Changed)
	_, ok = s.Node("node-a")
	require.False(t, ok)
	require.Empty(t, s.Nodes())
}

func TestRegistryViews(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeB), register(nodeA), register(Identity{Node: "node-c", Incarnation: 3}))
	require.Equal(t, []NodeIncarnation{{"node-a", 11, 2}, {"node-b", 22, 1}, {"node-c", 3, 3}}, s.Incarnations())
	require.Equal(t, []string{"node-a", "node-c"}, s.VoterNames([]string{"raft-node-c", "raft-node-a", "raft-unknown"}))
	require.Empty(t, s.VoterNames(nil))
}

func TestCloneIsIndependent(t *testing.T) {
	s := baseState(t)
	c := s.Clone()
	requireSameState(t, s, c)
	mustApply(t, c, stopCmd("live"), register(Identity{Node: "node-c", Incarnation: 1}))
	require.NotEqual(t, s.Domains(), c.Domains())
	d, _ := s.Domain("live")
	require.NotNil(t, d.Mapping)

	// Accessors return copies: mutating one does not reach the state.
	d.Mapping.Rate = 7
	d.Name = "changed"
	again, _ := s.Domain("live")
	require.Equal(t, float64(60), again.Mapping.Rate)
	ds := s.Domains()
	ds[0].Mapping = nil
	require.Equal(t, s.Domains()[0].Name, "arch")
}

func TestDomainsSorted(t *testing.T) {
	s := NewState()
	for _, n := range []string{"zeta", "alpha", "Mid", "beta", "ALPHA"} {
		mustApply(t, s, createUnpaced(n))
	}
	var names []string
	for _, d := range s.Domains() {
		names = append(names, d.Name)
	}
	require.Equal(t, []string{"ALPHA", "Mid", "alpha", "beta", "zeta"}, names)
}

func TestZeroStateApply(t *testing.T) {
	var s State
	r := s.Apply(createUnpaced("x"))
	require.NoError(t, r.Err())
	require.Equal(t, uint64(1), r.Revision)
}

func TestExhaustedCounters(t *testing.T) {
	s := baseState(t)
	s.revision = math.MaxUint64
	r := s.Apply(createUnpaced("x"))
	require.ErrorIs(t, r.Err(), ErrInvalidCommand)
	require.Equal(t, uint64(math.MaxUint64), r.Revision)

	s = baseState(t)
	d, _ := s.Domain("prod")
	d.Generation = math.MaxUint64
	d.LastStart = point(StartNow, 0, 0, 1)
	s.putRecord(&d)
	require.ErrorIs(t, s.Apply(startCmd("prod", point(StartNow, 0, 0, 1), &nodeA)).Err(), ErrInvalidCommand)

	s = baseState(t)
	d, _ = s.Domain("live")
	d.Authority.Revision = math.MaxUint64
	s.putRecord(&d)
	require.ErrorIs(t, s.Apply(stopCmd("live")).Err(), ErrInvalidCommand)
	below := d // the stored record is never written; store a new one
	below.Authority.Revision = math.MaxUint64 - 1
	s.putRecord(&below)
	require.NoError(t, s.Apply(stopCmd("live")).Err())
}

func TestErrorSurvivesEncoding(t *testing.T) {
	s := baseState(t)
	r := s.Apply(dropCmd("live", false))
	b, err := encodeJSON(r)
	require.NoError(t, err)
	var back Result
	require.NoError(t, decodeJSON(b, &back))
	require.Equal(t, r, back)
	require.ErrorIs(t, back.Err(), ErrDomainRunning)
	require.False(t, errors.Is(back.Err(), ErrDomainNotFound))
	require.Nil(t, Result{}.Err())
	require.Nil(t, (&Error{Code: "unheard_of"}).Unwrap())
	require.Nil(t, AsError(errors.New("plain")))
}

func TestRunsPacedDomain(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmds []Command
		want bool
	}{
		{"empty catalog", nil, false},
		{"stopped paced domain", []Command{createPaced("p")}, false},
		{"running unpaced domain", []Command{createUnpaced("u"), startCmd("u", point(StartNow, utc0, utc0, 1), nil)}, false},
		{"running paced domain", []Command{register(nodeA), createPaced("p"), startCmd("p", point(StartNow, utc0, utc0, 60), &nodeA)}, true},
		{"running paced domain among many", append(manyUnpaced(300), register(nodeA), createPaced("p"), startCmd("p", point(StartNow, utc0, utc0, 60), &nodeA)), true},
		{"one of two running paced domains stopped", []Command{register(nodeA), createPaced("p"), createPaced("q"),
			startCmd("p", point(StartNow, utc0, utc0, 60), &nodeA), startCmd("q", point(StartNow, utc0, utc0, 60), &nodeA), stopCmd("q")}, true},
		{"paced domain stopped again", []Command{register(nodeA), createPaced("p"), startCmd("p", point(StartNow, utc0, utc0, 60), &nodeA), stopCmd("p")}, false},
		{"running paced domain dropped", []Command{register(nodeA), createPaced("p"), startCmd("p", point(StartNow, utc0, utc0, 60), &nodeA), stopCmd("p"), dropCmd("p", false)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			mustApply(t, s, tc.cmds...)
			require.Equal(t, tc.want, s.RunsPacedDomain())
			require.Equal(t, tc.want, s.Clone().RunsPacedDomain(), "a clone")
			snap, err := s.MarshalSnapshot()
			require.NoError(t, err)
			restored, err := RestoreSnapshot(snap)
			require.NoError(t, err)
			require.Equal(t, tc.want, restored.RunsPacedDomain(), "restored from a snapshot")
		})
	}
}

// manyUnpaced creates n unpaced domains, spread over the whole table.
func manyUnpaced(n int) []Command {
	out := make([]Command, n)
	for i := range out {
		out[i] = createUnpaced(fmt.Sprintf("u%03d", i))
	}
	return out
}
