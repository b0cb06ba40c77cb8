package catalog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

func withID(c lifecycle.Command, id string) lifecycle.Command {
	c.RequestID = id
	return c
}

func result(t *testing.T, out any) lifecycle.Result {
	t.Helper()
	r, ok := out.(*lifecycle.Result)
	require.True(t, ok, "entry answered %T", out)
	return *r
}

// TestFSMRequestAppliesOnce replays a command under the request id of an
// earlier entry, as a retry after a leader change commits it: it changes
// nothing and answers with the first result, before and after the window
// travels through a snapshot, until the id is evicted.
func TestFSMRequestAppliesOnce(t *testing.T) {
	cases := []struct {
		name  string
		retry func(t *testing.T, f *FSM) *FSM // the FSM the retry reaches
	}{
		{"on the same FSM", func(_ *testing.T, f *FSM) *FSM { return f }},
		{"after a snapshot and restore", func(t *testing.T, f *FSM) *FSM {
			fresh := NewFSM(quietLogger(t), nil)
			require.NoError(t, fresh.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))))
			require.Equal(t, f.requests.entries(), fresh.requests.entries())
			return fresh
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFSM(quietLogger(t), nil)
			first := result(t, f.Apply(logs(t, 1, withID(createCmd("once", lifecycle.Unpaced), "n1-a-1"))[0]))
			require.True(t, first.Changed)
			refused := result(t, f.Apply(logs(t, 2, withID(createCmd("once", lifecycle.Unpaced), "n1-a-2"))[0]))
			require.ErrorIs(t, refused.Err(), lifecycle.ErrDomainExists)
			f.Apply(logs(t, 3, withID(stopCmd("other"), "n1-a-3"))[0]) // refused: no such domain
			g := tc.retry(t, f)
			before := g.State()

			// The retry of the create answers its first result, not
			// "already exists"; the retry of the refused one its refusal.
			again := result(t, g.Apply(logs(t, 4, withID(createCmd("once", lifecycle.Unpaced), "n1-a-1"))[0]))
			require.Equal(t, first, again)
			require.Equal(t, refused, result(t, g.Apply(logs(t, 5, withID(createCmd("once", lifecycle.Unpaced), "n1-a-2"))[0])))
			require.Same(t, before, g.State(), "a retried request changes nothing")

			// A retry is recognised by its id alone: the window answers
			// whatever entry carries it.
			require.Equal(t, first, result(t, g.Apply(logs(t, 6, withID(createCmd("elsewhere", lifecycle.Unpaced), "n1-a-1"))[0])))
			_, ok := g.State().Domain("elsewhere")
			require.False(t, ok)

			// A command without an id always applies.
			require.True(t, result(t, g.Apply(logs(t, 7, createCmd("plain", lifecycle.Unpaced))[0])).Changed)
		})
	}
}

// TestFSMRequestWindowEvictsInApplyOrder fills a small window: the oldest
// id goes first, and a command under an evicted id applies again.
func TestFSMRequestWindowEvictsInApplyOrder(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	f.requests = newRequestWindow(2)
	f.ApplyBatch(logs(t, 1,
		withID(createCmd("a", lifecycle.Unpaced), "r1"),
		withID(createCmd("b", lifecycle.Unpaced), "r2"),
		withID(createCmd("c", lifecycle.Unpaced), "r3"), // evicts r1
	))
	require.Equal(t, []string{"r2", "r3"}, ids(f.requests.entries()))
	rev := f.Revision()
	// r2 is remembered: no change. r1 is not: it applies again and is
	// refused as a duplicate name.
	out := f.ApplyBatch(logs(t, 4,
		withID(createCmd("b", lifecycle.Unpaced), "r2"),
		withID(createCmd("a", lifecycle.Unpaced), "r1"), // evicts r2
	))
	require.True(t, result(t, out[0]).Changed, "the first result of r2")
	require.ErrorIs(t, result(t, out[1]).Err(), lifecycle.ErrDomainExists)
	require.Equal(t, rev, f.Revision())
	require.Equal(t, []string{"r3", "r1"}, ids(f.requests.entries()))

	// A snapshot of a full window restores in the same order and keeps
	// evicting the same way.
	g := NewFSM(quietLogger(t), nil)
	g.requests = newRequestWindow(2)
	require.NoError(t, g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))))
	next := logs(t, 6, withID(createCmd("d", lifecycle.Unpaced), "r4"))
	require.Equal(t, f.ApplyBatch(next), g.ApplyBatch(next))
	require.Equal(t, f.requests.entries(), g.requests.entries())
	require.Equal(t, []string{"r1", "r4"}, ids(g.requests.entries()))
	require.Equal(t, snapshotBytes(t, f), snapshotBytes(t, g))
}

func ids(rs []rememberedRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// TestFSMRestoresVersion1Snapshot restores the framing earlier builds
// wrote, the lifecycle snapshot alone, with an empty request window.
func TestFSMRestoresVersion1Snapshot(t *testing.T) {
	src := NewFSM(quietLogger(t), nil)
	src.ApplyBatch(logs(t, 1, scenario()...))
	payload, err := src.State().MarshalSnapshot()
	require.NoError(t, err)
	var v1 bytes.Buffer
	require.NoError(t, writeFrame(&v1, snapshotV1, payload))
	dst := NewFSM(quietLogger(t), nil)
	require.NoError(t, dst.Restore(io.NopCloser(&v1)))
	requireSameState(t, src.State(), dst.State())
	require.Empty(t, dst.requests.entries())
}

// TestFSMRestoreRefusesBadRequestWindow covers what a window never holds.
func TestFSMRestoreRefusesBadRequestWindow(t *testing.T) {
	s := lifecycle.NewState()
	cases := map[string][]rememberedRequest{
		"empty id":         {{ID: ""}},
		"duplicate id":     {{ID: "r"}, {ID: "r"}},
		"revision ahead":   {{ID: "r", Result: lifecycle.Result{Revision: 1}}},
		"id over the size": {{ID: string(make([]byte, lifecycle.MaxRequestIDLen+1))}},
	}
	for name, reqs := range cases {
		t.Run(name, func(t *testing.T) {
			payload, err := encodeSnapshot(s, reqs)
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, writeSnapshot(&b, payload))
			f := NewFSM(quietLogger(t), nil)
			require.ErrorIs(t, f.Restore(io.NopCloser(&b)), ErrSnapshot)
		})
	}
	var b bytes.Buffer
	require.NoError(t, writeFrame(&b, snapshotV2, []byte(`{"state":{"version":1,"revision":0,"domains":[],"nodes":[]}}`)))
	require.ErrorIs(t, NewFSM(quietLogger(t), nil).Restore(io.NopCloser(&b)), ErrSnapshot, "a version 2 payload has a window")
}

// TestProposeRetryAppliesOnce proposes a write, then proposes it again
// under the same request id, as a caller that saw an unknown outcome does;
// the second proposal answers with the first result, also after the node
// restarts from a snapshot of its data directory.
func TestProposeRetryAppliesOnce(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, Config{DataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := withID(createCmd("retried", lifecycle.Unpaced), n.NewRequestID())
	first, err := n.Propose(ctx, cmd)
	require.NoError(t, err)
	require.True(t, first.Changed)
	again, err := n.Propose(ctx, cmd)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, first.Revision, n.Revision())

	// Without the id the same create is refused: the window is what made
	// the retry succeed.
	plain, err := n.Propose(ctx, createCmd("retried", lifecycle.Unpaced))
	require.NoError(t, err)
	require.ErrorIs(t, plain.Err(), lifecycle.ErrDomainExists)

	require.NoError(t, n.Snapshot())
	require.NoError(t, n.Close())
	reopened := openNode(t, Config{DataDir: dir})
	after, err := reopened.Propose(ctx, cmd)
	require.NoError(t, err)
	require.Equal(t, first, after)
	require.NotEqual(t, n.NewRequestID(), reopened.NewRequestID(), "a new incarnation never reuses an id")
}

// TestRequestWindowMatchesReference drives windows of several sizes with
// random lookups and first results over a small id space, so that ids are
// evicted, come back, and collide in the index, and requires every answer
// and the entries, oldest first, to be those of a map and a queue.
func TestRequestWindowMatchesReference(t *testing.T) {
	for _, size := range []int{1, 2, 3, 7, 64} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("size=%d/seed=%d", size, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(size)))
				w := newRequestWindow(size)
				ref := map[string]lifecycle.Result{}
				var order []string
				for step := range 5000 {
					id := fmt.Sprintf("n-%d", rng.IntN(3*size+2))
					got, ok := w.lookup(id)
					want, wantOK := ref[id]
					require.Equal(t, wantOK, ok, "step %d: lookup %q", step, id)
					require.Equal(t, want, got, "step %d: lookup %q", step, id)
					if ok {
						continue
					}
					r := lifecycle.Result{Revision: uint64(step), Changed: rng.IntN(2) == 0}
					w.remember(id, r)
					ref[id] = r
					if order = append(order, id); len(order) > size {
						delete(ref, order[0])
						order = order[1:]
					}
					entries := w.entries()
					require.Len(t, entries, len(order))
					for i, e := range entries {
						require.Equal(t, order[i], e.ID)
						require.Equal(t, ref[e.ID], e.Result)
					}
				}
			})
		}
	}
}
