package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDomainsChangedNamesExactlyTheChangedRecords applies random command
// sequences, restores among them, and checks after every command that
// changed the state that the domains DomainsChanged names are exactly the
// domains whose record was created, replaced or removed: a replica that
// installs only those misses nothing and touches nothing else.
func TestDomainsChangedNamesExactlyTheChangedRecords(t *testing.T) {
	seen := map[Op]int{}
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			s := NewState()
			for i := range 400 {
				cmd := randomCommand(rng, s)
				if rng.IntN(12) == 0 {
					cmd = randomRestore(rng)
				}
				before := s.Clone()
				r := s.Apply(cmd)
				if !r.Changed {
					continue
				}
				seen[cmd.Op]++
				named := cmd.DomainsChanged(nil)
				names := map[string]bool{}
				for _, d := range before.Domains() {
					names[d.Name] = true
				}
				for _, d := range s.Domains() {
					names[d.Name] = true
				}
				for name := range names {
					was, wasOK := before.Domain(name)
					now, nowOK := s.Domain(name)
					differs := wasOK != nowOK || !equalDomain(was, now)
					require.Equal(t, differs, slices.Contains(named, name),
						"step %d: %s: domain %q changed=%v but named %v", i, cmd.Op, name, differs, named)
				}
			}
		})
	}
	for _, op := range []Op{OpCreateDomain, OpAlterPlacement, OpDropDomain, OpStart, OpStop, OpTransaction,
		OpRegisterNode, OpDeregisterNode, OpReassignAuthority, OpRestore} {
		require.Positive(t, seen[op], "op %s never changed the state", op)
	}
}

// TestDomainsChangedAppends checks the names of each op, appended to what
// dst holds.
func TestDomainsChangedAppends(t *testing.T) {
	pt := point(StartAt, 0, 0, 1)
	tests := []struct {
		cmd  Command
		want []string
	}{
		{createPaced("a"), []string{"x", "a"}},
		{alterCmd("a", SuggestSeparation), []string{"x", "a"}},
		{dropCmd("a", false), []string{"x", "a"}},
		{startCmd("a", pt, nil), []string{"x", "a"}},
		{stopCmd("a"), []string{"x", "a"}},
		{Command{Op: OpTransaction, Transaction: &Transaction{Domain: "a"}}, []string{"x", "a"}},
		{reassignCmd("a", 1, AuthorityFence{}, nil), []string{"x", "a"}},
		{Command{Op: OpRestore, Restore: &Restore{Domains: []RestoredDomain{{Name: "a"}, {Name: "b"}}}}, []string{"x", "a", "b"}},
		{register(Identity{Node: "n0", Incarnation: 1}), []string{"x"}},
		{Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "n0", Incarnation: 1}}, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.cmd.Op), func(t *testing.T) {
			require.Equal(t, tt.want, tt.cmd.DomainsChanged([]string{"x"}))
		})
	}
}

// randomRestore restores two stopped domains over randomCommand's name
// space, so it often collides with an existing name (a refusal).
func randomRestore(rng *rand.Rand) Command {
	domains := []string{"d0", "d1", "d2", "d3"}
	a := rng.IntN(len(domains))
	b := (a + 1 + rng.IntN(len(domains)-1)) % len(domains)
	return Command{Op: OpRestore, Restore: &Restore{Domains: []RestoredDomain{
		{Name: domains[a], Pace: Unpaced},
		{Name: domains[b], Pace: Paced, Period: 1000},
	}}}
}

func equalDomain(a, b Domain) bool {
	if (a.Mapping == nil) != (b.Mapping == nil) || (a.Mapping != nil && *a.Mapping != *b.Mapping) {
		return false
	}
	a.Mapping, b.Mapping = nil, nil
	return a == b
}
