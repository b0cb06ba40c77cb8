package lifecycle

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// richState exercises every field: paced and unpaced, running and stopped,
// a revoked fence, extreme values, a restarted node.
func richState(t testing.TB) *State {
	s := baseState(t)
	mustApply(t, s,
		alterCmd("prod", PreferColocation),
		startCmd("prod", point(StartAt, math.MinInt64, math.MaxInt64, 5e-324), &nodeB),
		Command{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "edge", Pace: Paced, Period: math.MaxUint64, Skew: math.MaxUint64, Placement: SuggestSeparation}},
		startCmd("edge", point(StartNow, utc0, utc0, math.MaxFloat64), &nodeA),
		stopCmd("edge"),
		reassignCmd("live", 1, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 1}, nil),
		register(Identity{Node: "node-a", Incarnation: 1234}),
		stopCmd("web"),
		cordonCmd("node-b", true),
	)
	return s
}

func TestSnapshotRoundTrip(t *testing.T) {
	for name, s := range map[string]*State{"empty": NewState(), "rich": richState(t)} {
		t.Run(name, func(t *testing.T) {
			b, err := s.MarshalSnapshot()
			require.NoError(t, err)
			got, err := RestoreSnapshot(b)
			require.NoError(t, err)
			requireSameState(t, s, got)
			again, err := got.MarshalSnapshot()
			require.NoError(t, err)
			require.Equal(t, b, again, "equal states give equal bytes")

			// The restored state keeps applying exactly like the original.
			cmds := []Command{stopCmd("live"), createUnpaced("after"), register(Identity{Node: "node-c", Incarnation: 9})}
			for _, c := range cmds {
				require.Equal(t, s.Clone().Apply(c), got.Clone().Apply(c))
			}
		})
	}
}

func TestSnapshotReplacesState(t *testing.T) {
	rich := richState(t)
	b, err := NewState().MarshalSnapshot()
	require.NoError(t, err)
	got, err := RestoreSnapshot(b)
	require.NoError(t, err)
	require.Empty(t, got.Domains())
	require.Empty(t, got.Nodes())
	require.Zero(t, got.Revision())
	require.NotEqual(t, rich.Domains(), got.Domains())
}

func TestSnapshotGolden(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), createPaced("prod"), startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA))
	b, err := s.MarshalSnapshot()
	require.NoError(t, err)
	require.JSONEq(t, `{"version":1,"revision":3,
		"domains":[{"name":"prod","pace":"PACED","period_ns":1000000000,"skew_ns":100000000,"placement":"NEUTRAL",
			"status":"running","generation":1,
			"last_start":{"mode":"at","logical_start":0,"time_rate":60,"wall_started_at":1767225600000000000},
			"authority":{"node":"node-a","incarnation":11,"revision":1},"revision":3,
			"mapping":{"wall_started_at":1767225600000000000,"logical_start":0,"time_rate":60}}],
		"nodes":[{"name":"node-a","incarnation":11,"raft_id":"raft-node-a","raft_addr":"node-a:7000","api_addr":"node-a:8000","registered":1}]}`, string(b))
}

// TestRestoreSnapshotInAnyOrder restores snapshots whose domains are listed
// in reverse name order: the restored state equals the one that wrote the
// snapshot, in both table forms. The names all hash to branch 1, so the
// trie's branch 0 is empty and its leaves hold several domains each: every
// leaf after an empty branch is sorted as well.
func TestRestoreSnapshotInAnyOrder(t *testing.T) {
	for _, n := range []int{5, flatMax + 8} {
		t.Run(fmt.Sprintf("%d domains", n), func(t *testing.T) {
			s := NewState()
			for i := 0; s.count < n; i++ {
				name := fmt.Sprintf("d%03d", i)
				if b, _ := tableSlot(name); b != 1 {
					continue
				}
				mustApply(t, s, createUnpaced(name))
			}
			if n > flatMax {
				shared := false
				for _, branch := range tableNames(s) {
					for _, leaf := range branch {
						shared = shared || len(leaf) > 1
					}
				}
				require.True(t, shared, "some leaf holds several domains")
				require.Nil(t, s.domains[0], "branch 0 is empty")
			}
			b, err := s.MarshalSnapshot()
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			slices.Reverse(m["domains"].([]any))
			reversed, err := json.Marshal(m)
			require.NoError(t, err)
			got, err := RestoreSnapshot(reversed)
			require.NoError(t, err)
			requireSameState(t, s, got)
			for _, d := range s.Domains() {
				_, ok := got.Domain(d.Name)
				require.True(t, ok, "domain %s is found", d.Name)
			}
		})
	}
}

func TestRestoreSnapshotRefuses(t *testing.T) {
	good := func() map[string]any {
		s := NewState()
		mustApply(t, s, register(nodeA), createPaced("prod"), createUnpaced("arch"), startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA))
		b, err := s.MarshalSnapshot()
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	domain := func(m map[string]any, i int) map[string]any { return m["domains"].([]any)[i].(map[string]any) }
	node := func(m map[string]any) map[string]any { return m["nodes"].([]any)[0].(map[string]any) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		msg    string
	}{
		{"version 0", func(m map[string]any) { m["version"] = 0 }, "format version 0 is not supported; this build reads version 1"},
		{"version 2", func(m map[string]any) { m["version"] = 2 }, "format version 2 is not supported; this build reads version 1"},
		{"unknown field", func(m map[string]any) { m["extra"] = true }, `does not decode: json: unknown field "extra"`},
		{"unknown domain field", func(m map[string]any) { domain(m, 1)["color"] = "red" }, `does not decode: json: unknown field "color"`},
		{"duplicate domain", func(m map[string]any) { m["domains"] = append(m["domains"].([]any), domain(m, 0)) }, "domain 'arch' appears twice"},
		{"duplicate node", func(m map[string]any) { m["nodes"] = append(m["nodes"].([]any), node(m)) }, "node 'node-a' appears twice"},
		{"empty domain name", func(m map[string]any) { domain(m, 0)["name"] = "" }, "domain with an empty name"},
		{"paced period 0", func(m map[string]any) { domain(m, 1)["period_ns"] = 0 }, "domain 'prod': paced with PERIOD 0"},
		{"unpaced with period", func(m map[string]any) { domain(m, 0)["period_ns"] = 1 }, "domain 'arch': unpaced with a PERIOD or SKEW"},
		{"running without generation", func(m map[string]any) { domain(m, 1)["generation"] = 0 }, "domain 'prod': running without a generation"},
		{"running without mapping", func(m map[string]any) { delete(domain(m, 1), "mapping") }, "domain 'prod': mapping present=false but paced and running=true"},
		{"stopped with mapping", func(m map[string]any) { domain(m, 1)["status"] = "stopped" }, "domain 'prod': mapping present=true but paced and running=false"},
		{"mapping differs from start", func(m map[string]any) {
			domain(m, 1)["mapping"].(map[string]any)["time_rate"] = 61
		}, "domain 'prod': mapping differs from the last start point"},
		{"start point rate 0", func(m map[string]any) {
			domain(m, 1)["last_start"].(map[string]any)["time_rate"] = 0
			domain(m, 1)["mapping"].(map[string]any)["time_rate"] = 0
		}, "domain 'prod': TIME RATE 0 must be a positive finite number"},
		{"start point without generation", func(m map[string]any) {
			domain(m, 0)["last_start"] = map[string]any{"mode": "now", "logical_start": 1, "time_rate": 1, "wall_started_at": 1}
		}, "domain 'arch': start point without a generation"},
		{"unpaced with fence", func(m map[string]any) {
			domain(m, 0)["authority"] = map[string]any{"node": "", "incarnation": 0, "revision": 1}
		}, "domain 'arch': unpaced with an authority fence"},
		{"half fence", func(m map[string]any) {
			domain(m, 1)["authority"].(map[string]any)["incarnation"] = 0
		}, "domain 'prod': authority fence with only one of node and incarnation"},
		{"domain revision ahead", func(m map[string]any) { domain(m, 1)["revision"] = 5 }, "domain 'prod' revision 5 is after the catalog revision 4"},
		{"node registered ahead", func(m map[string]any) { node(m)["registered"] = 5 }, "node 'node-a' registration 5 is after the catalog revision 4"},
		{"node zero incarnation", func(m map[string]any) { node(m)["incarnation"] = 0 }, `node "node-a" with incarnation 0 is not a valid registration`},
		{"node empty name", func(m map[string]any) { node(m)["name"] = "" }, `node "" with incarnation 11 is not a valid registration`},
		{"bad status", func(m map[string]any) { domain(m, 1)["status"] = "paused" }, `does not decode: unknown status "paused"; use stopped or running`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.mutate(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = RestoreSnapshot(b)
			require.ErrorIs(t, err, ErrInvalidSnapshot)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	// The unmutated document restores: the refusals above are the mutation.
	b, err := json.Marshal(good())
	require.NoError(t, err)
	_, err = RestoreSnapshot(b)
	require.NoError(t, err)

	for _, in := range []string{``, `null`, `{}`, `{"version":1} {}`, `{"version":1,"revision":-1}`, `[1]`} {
		_, err := RestoreSnapshot([]byte(in))
		require.ErrorIs(t, err, ErrInvalidSnapshot, in)
	}
}

func FuzzRestoreSnapshot(f *testing.F) {
	for _, s := range []*State{NewState(), baseState(f), richState(f)} {
		b, err := s.MarshalSnapshot()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"revision":0,"domains":[],"nodes":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := RestoreSnapshot(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidSnapshot)
			return
		}
		for _, d := range s.Domains() {
			require.NoError(t, validateDomain(d))
		}
		enc, err := s.MarshalSnapshot()
		require.NoError(t, err)
		back, err := RestoreSnapshot(enc)
		require.NoError(t, err)
		requireSameState(t, s, back)
		enc2, err := back.MarshalSnapshot()
		require.NoError(t, err)
		require.Equal(t, enc, enc2)
		// Every restored state accepts commands without panicking.
		for _, c := range validCommands() {
			s.Apply(c)
		}
		for _, c := range Reconcile(s, s.Incarnations(), []string{"node-a", "node-b"}) {
			s.Apply(c)
		}
	})
}
