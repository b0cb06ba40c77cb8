package lifecycle

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDomainHashIsFNV1a64(t *testing.T) {
	// Published FNV-1a 64 vectors, then a cross-check against hash/fnv.
	require.Equal(t, uint64(0xcbf29ce484222325), DomainHash(""))
	require.Equal(t, uint64(0xaf63dc4c8601ec8c), DomainHash("a"))
	require.Equal(t, uint64(0x85944171f73967e8), DomainHash("foobar"))
	for _, name := range []string{"prod", "archive", "ünïcode ☃", "a-very-long-domain-name-with-many-bytes"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		require.Equal(t, h.Sum64(), DomainHash(name), name)
	}
}

func TestCandidates(t *testing.T) {
	tests := []struct {
		name      string
		available []NodeIncarnation
		voters    []string
		want      []Identity
	}{
		{"nothing", nil, nil, []Identity{}},
		{"no voters", []NodeIncarnation{{"a", 1, 1}}, nil, []Identity{}},
		{"no available", nil, []string{"a"}, []Identity{}},
		{"intersection sorted", []NodeIncarnation{{"c", 3, 3}, {"a", 1, 1}, {"b", 2, 2}, {"x", 9, 9}}, []string{"c", "a", "z"},
			[]Identity{{Node: "a", Incarnation: 1}, {Node: "c", Incarnation: 3}}},
		{"newest registration wins", []NodeIncarnation{{"a", 50, 4}, {"a", 7, 9}, {"a", 99, 2}}, []string{"a"}, []Identity{{Node: "a", Incarnation: 7}}},
		{"tie broken by incarnation", []NodeIncarnation{{"a", 5, 3}, {"a", 8, 3}, {"a", 6, 3}}, []string{"a"}, []Identity{{Node: "a", Incarnation: 8}}},
		{"exact duplicates", []NodeIncarnation{{"a", 5, 3}, {"a", 5, 3}}, []string{"a", "a"}, []Identity{{Node: "a", Incarnation: 5}}},
		{"invalid observations ignored", []NodeIncarnation{{"", 5, 3}, {"a", 0, 9}, {"a", 4, 1}}, []string{"", "a"}, []Identity{{Node: "a", Incarnation: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Candidates(tc.available, tc.voters))
		})
	}
}

func TestSelectAuthority(t *testing.T) {
	_, ok := SelectAuthority("prod", nil, []string{"a"})
	require.False(t, ok)

	one := []NodeIncarnation{{"a", 1, 1}}
	id, ok := SelectAuthority("prod", one, []string{"a"})
	require.True(t, ok)
	require.Equal(t, Identity{Node: "a", Incarnation: 1}, id)

	// The documented rule, computed independently: sorted names, hash mod n.
	avail := []NodeIncarnation{{"n3", 3, 1}, {"n1", 1, 1}, {"n2", 2, 1}}
	voters := []string{"n1", "n2", "n3"}
	for _, d := range []string{"", "prod", "archive", "x"} {
		h := fnv.New64a()
		h.Write([]byte(d))
		want := []Identity{{Node: "n1", Incarnation: 1}, {Node: "n2", Incarnation: 2}, {Node: "n3", Incarnation: 3}}[h.Sum64()%3]
		got, ok := SelectAuthority(d, avail, voters)
		require.True(t, ok)
		require.Equal(t, want, got, d)
	}
}

// TestSelectAuthorityOrderIndependent checks every permutation of a
// candidate list (with duplicate and non-voter observations mixed in)
// selects the same authority.
func TestSelectAuthorityOrderIndependent(t *testing.T) {
	base := []NodeIncarnation{
		{"n-e", 5, 5}, {"n-a", 1, 1}, {"n-c", 3, 3}, {"n-b", 2, 2},
		{"n-a", 10, 8}, {"outsider", 7, 7}, {"n-d", 4, 4},
	}
	voters := []string{"n-a", "n-b", "n-c", "n-d", "n-e"}
	domains := []string{"prod", "archive", "metrics", "", "z"}
	want := map[string]Identity{}
	for _, d := range domains {
		want[d], _ = SelectAuthority(d, base, voters)
	}
	count := 0
	permute(base, func(p []NodeIncarnation) {
		count++
		rv := append([]string(nil), voters...)
		for i, j := 0, len(rv)-1; i < j; i, j = i+1, j-1 {
			rv[i], rv[j] = rv[j], rv[i]
		}
		for _, d := range domains {
			got, ok := SelectAuthority(d, p, rv)
			require.True(t, ok)
			require.Equal(t, want[d], got, "domain %q order %v", d, p)
		}
	})
	require.Equal(t, 5040, count)
	for _, id := range want {
		if id.Node == "n-a" {
			require.Equal(t, uint64(10), id.Incarnation)
		}
		require.NotEqual(t, "outsider", id.Node)
	}
}

// permute calls fn with every permutation of xs (Heap's algorithm).
func permute(xs []NodeIncarnation, fn func([]NodeIncarnation)) {
	a := append([]NodeIncarnation(nil), xs...)
	c := make([]int, len(a))
	fn(a)
	for i := 0; i < len(a); {
		if c[i] < i {
			if i%2 == 0 {
				a[0], a[i] = a[i], a[0]
			} else {
				a[c[i]], a[i] = a[i], a[c[i]]
			}
			fn(a)
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
}

// TestSelectAuthorityDistributes places many domain names over voter sets of
// several sizes and requires every voter's share to stay within 15% of the
// fair share.
func TestSelectAuthorityDistributes(t *testing.T) {
	const domains = 12000
	for _, n := range []int{2, 3, 5, 7, 16} {
		t.Run(fmt.Sprintf("%d voters", n), func(t *testing.T) {
			var avail []NodeIncarnation
			var voters []string
			for i := range n {
				name := fmt.Sprintf("node-%02d", i)
				avail = append(avail, NodeIncarnation{name, uint64(i + 1), uint64(i + 1)})
				voters = append(voters, name)
			}
			counts := map[string]int{}
			for i := range domains {
				id, ok := SelectAuthority(fmt.Sprintf("domain-%d", i), avail, voters)
				require.True(t, ok)
				counts[id.Node]++
			}
			require.Len(t, counts, n, "every voter owns some domain")
			fair := float64(domains) / float64(n)
			for node, c := range counts {
				require.InDelta(t, fair, float64(c), fair*0.15, "node %s owns %d of %d", node, c, domains)
			}
		})
	}
}

func TestReconcile(t *testing.T) {
	s := NewState()
	nodeC := Identity{Node: "node-c", Incarnation: 33}
	mustApply(t, s, register(nodeA), register(nodeB), register(nodeC),
		createPaced("p1"), createPaced("p2"), createPaced("p3"), createPaced("stopped"), createUnpaced("u"),
		startCmd("p1", point(StartNow, utc0, utc0, 1), &nodeA),
		startCmd("p2", point(StartNow, utc0, utc0, 1), &nodeB),
		startCmd("p3", point(StartNow, utc0, utc0, 1), &nodeC),
		startCmd("u", point(StartNow, utc0, utc0, 1), nil),
	)
	all := s.Incarnations()
	voters := []string{"node-a", "node-b", "node-c"}

	t.Run("all eligible: nothing to do", func(t *testing.T) {
		require.Empty(t, Reconcile(s, all, voters))
	})

	t.Run("lost node that owns no clock: nothing moves", func(t *testing.T) {
		// A leadership transfer removes the old leader from the candidates;
		// when it owns no clock, no authority moves, whoever reconciles.
		c := s.Clone()
		nodeD := Identity{Node: "node-d", Incarnation: 44}
		mustApply(t, c, register(nodeD))
		four := append(append([]string(nil), voters...), "node-d")
		require.Empty(t, Reconcile(c, c.Incarnations(), four))
		var withoutD []NodeIncarnation
		for _, a := range c.Incarnations() {
			if a.Node != "node-d" {
				withoutD = append(withoutD, a)
			}
		}
		require.Empty(t, Reconcile(c, withoutD, four))
	})
	t.Run("lost authority moves", func(t *testing.T) {
		avail := []NodeIncarnation{all[1], all[2]} // node-a gone
		cmds := Reconcile(s, avail, voters)
		require.Len(t, cmds, 1)
		r := cmds[0].ReassignAuthority
		want, _ := SelectAuthority("p1", avail, voters)
		require.Equal(t, ReassignAuthority{Domain: "p1", ExpectedGeneration: 1, ExpectedFence: AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}, Authority: &want}, *r)
		c := s.Clone()
		res := c.Apply(cmds[0])
		require.NoError(t, res.Err())
		require.Empty(t, Reconcile(c, avail, voters), "converged")
		// Proposing the same command again against the new state is refused.
		require.ErrorIs(t, c.Apply(cmds[0]).Err(), ErrAuthorityConflict)
	})

	t.Run("voter removed", func(t *testing.T) {
		cmds := Reconcile(s, all, []string{"node-a", "node-c"})
		require.Len(t, cmds, 1)
		require.Equal(t, "p2", cmds[0].ReassignAuthority.Domain)
		require.NotEqual(t, "node-b", cmds[0].ReassignAuthority.Authority.Node)
	})

	t.Run("restarted incarnation", func(t *testing.T) {
		c := s.Clone()
		restarted := Identity{Node: "node-a", Incarnation: 12}
		mustApply(t, c, register(restarted))
		// The old incarnation still observed beside the new one: newest wins.
		avail := append(c.Incarnations(), NodeIncarnation{"node-a", 11, 1})
		cmds := Reconcile(c, avail, voters)
		require.Len(t, cmds, 1)
		require.Equal(t, "p1", cmds[0].ReassignAuthority.Domain)
		require.NoError(t, c.Apply(cmds[0]).Err())
		d, _ := c.Domain("p1")
		require.NotEqual(t, Identity{Node: "node-a", Incarnation: 11}, d.Authority.Identity())
	})

	t.Run("unregistered observation is not eligible", func(t *testing.T) {
		avail := []NodeIncarnation{{"node-a", 999, 50}}
		cmds := Reconcile(s, avail, voters)
		require.Len(t, cmds, 3)
		for _, c := range cmds {
			require.Nil(t, c.ReassignAuthority.Authority, "revoke %s", c.ReassignAuthority.Domain)
		}
	})

	t.Run("nobody eligible revokes, then nothing", func(t *testing.T) {
		c := s.Clone()
		cmds := Reconcile(c, nil, voters)
		require.Len(t, cmds, 3)
		var names []string
		for _, cmd := range cmds {
			names = append(names, cmd.ReassignAuthority.Domain)
			require.Nil(t, cmd.ReassignAuthority.Authority)
			r := c.Apply(cmd)
			require.NoError(t, r.Err())
			require.True(t, r.Changed)
		}
		require.Equal(t, []string{"p1", "p2", "p3"}, names)
		require.Empty(t, Reconcile(c, nil, voters))
		d, _ := c.Domain("p1")
		require.Equal(t, AuthorityFence{Revision: 2}, d.Authority)
		require.NotNil(t, d.Mapping, "the mapping stays replicated while unassigned")

		// A voter returns: every unassigned domain is assigned again.
		cmds = Reconcile(c, all[:1], voters)
		require.Len(t, cmds, 3)
		for _, cmd := range cmds {
			require.Equal(t, &nodeA, cmd.ReassignAuthority.Authority)
			require.NoError(t, c.Apply(cmd).Err())
		}
		d, _ = c.Domain("p1")
		require.Equal(t, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 3}, d.Authority)
	})

	t.Run("each domain is judged alone, in name order", func(t *testing.T) {
		// Domains that need nothing sort before the ones that do: a stopped
		// paced domain, a running unpaced one, and one already unassigned
		// while nobody is eligible.
		c := s.Clone()
		mustApply(t, c, createPaced("a-stopped"), createUnpaced("a-unpaced"),
			startCmd("a-unpaced", point(StartNow, utc0, utc0, 1), nil),
			reassignCmd("p1", 1, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}, nil))
		var names []string
		for _, cmd := range Reconcile(c, nil, voters) {
			names = append(names, cmd.ReassignAuthority.Domain)
			require.Nil(t, cmd.ReassignAuthority.Authority)
		}
		require.Equal(t, []string{"p2", "p3"}, names, "every assigned domain is revoked")
		// With every voter back, only the unassigned domain is assigned.
		cmds := Reconcile(c, all, voters)
		require.Len(t, cmds, 1)
		want, _ := SelectAuthority("p1", all, voters)
		require.Equal(t, ReassignAuthority{Domain: "p1", ExpectedGeneration: 1, ExpectedFence: AuthorityFence{Revision: 2}, Authority: &want},
			*cmds[0].ReassignAuthority)
	})

	t.Run("deterministic for shuffled inputs", func(t *testing.T) {
		avail := []NodeIncarnation{all[0], all[2]}
		want := Reconcile(s, avail, voters)
		rng := rand.New(rand.NewPCG(1, 2))
		for range 50 {
			a := append([]NodeIncarnation(nil), avail...)
			v := append([]string(nil), voters...)
			rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
			rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
			require.Equal(t, want, Reconcile(s, a, v))
		}
	})
}

// TestReconcileDomainsIsReconcileOfTheNamed checks, for every subset of a
// catalog's domains and every availability of its nodes, that
// ReconcileDomains gives exactly Reconcile's commands for the named
// domains, in the order named, once each, skipping names the catalog lacks.
func TestReconcileDomainsIsReconcileOfTheNamed(t *testing.T) {
	s := NewState()
	nodeC := Identity{Node: "node-c", Incarnation: 33}
	mustApply(t, s, register(nodeA), register(nodeB), register(nodeC),
		createPaced("p1"), createPaced("p2"), createPaced("p3"), createPaced("stopped"), createUnpaced("u"),
		startCmd("p1", point(StartNow, utc0, utc0, 1), &nodeA),
		startCmd("p2", point(StartNow, utc0, utc0, 1), &nodeB),
		startCmd("p3", point(StartNow, utc0, utc0, 1), &nodeC),
		startCmd("u", point(StartNow, utc0, utc0, 1), nil),
	)
	names := []string{"p3", "missing", "u", "p1", "stopped", "p2"}
	all := s.Incarnations()
	voters := []string{"node-a", "node-b", "node-c"}
	for avail := range 1 << len(all) {
		var available []NodeIncarnation
		for i, a := range all {
			if avail&(1<<i) != 0 {
				available = append(available, a)
			}
		}
		byDomain := map[string]Command{}
		for _, cmd := range Reconcile(s, available, voters) {
			byDomain[cmd.ReassignAuthority.Domain] = cmd
		}
		for subset := range 1 << len(names) {
			var named, want []Command
			var picked []string
			for i, name := range names {
				if subset&(1<<i) == 0 {
					continue
				}
				picked = append(picked, name, name) // each twice: once counts
				if cmd, ok := byDomain[name]; ok {
					want = append(want, cmd)
				}
			}
			named = ReconcileDomains(s, picked, available, voters)
			require.Equal(t, want, named, "available %b, names %v", avail, picked)
		}
	}
}
