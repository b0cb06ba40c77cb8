package node

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/planner"
	"github.com/stretchr/testify/require"
)

// TestNoProducerForAnotherIncarnation: a producer runs only for an
// authority that names this process's full identity. An installed clock
// whose authority names this node's name under another incarnation (a
// predecessor or a successor of this process) gets no producer, and the
// producer this incarnation ran is retired; the same clock naming this
// incarnation gets one again.
func TestNoProducerForAnotherIncarnation(t *testing.T) {
	fake := timesource.NewFake(t0)
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "prod", 1)
	self := n.Identity()
	lc := n.registry.Current("prod").Lifecycle()
	require.Equal(t, self, lc.Authority.Identity())

	for i, tc := range []struct {
		name        string
		incarnation uint64
		produces    bool
	}{
		{"a later incarnation", self.Incarnation + 1, false},
		{"an earlier incarnation", self.Incarnation - 1, false},
		{"this incarnation", self.Incarnation, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := lc
			next.Authority.Incarnation = tc.incarnation
			next.Authority.Revision = lc.Authority.Revision + uint64(i) + 1
			next.Revision = lc.Revision + uint64(i) + 1
			changed, err := n.registry.Install("prod", next)
			require.NoError(t, err)
			require.True(t, changed)
			// As the node's installation hands the revision on.
			n.installMu.Lock()
			n.producers.installedRevision(next.Revision, []string{"prod"}, false)
			n.installMu.Unlock()
			if tc.produces {
				waitProducer(t, n, "prod", "this incarnation's producer", func(f clockrt.ProducerFence, ok bool) bool {
					return ok && f.Authority == next.Authority
				})
				return
			}
			retirementsSettled(t, n)
			f, ok, _ := n.producers.fence("prod")
			require.False(t, ok, "a producer runs for %s", f.Authority)
		})
	}
}

// retirementsSettled waits until the producer set has nothing left to do:
// no installation or ended retirement waits for a pass of the loop, and no
// retired producer is still exiting. A pass clears the pending domains and
// starts every successor the registry asks for in the same hold of the
// lock, and a retirement marks its domain pending in the hold that ends
// it, so once both are empty every producer the installed clocks ask for
// has been started, whatever the machine's speed.
func retirementsSettled(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ps := n.producers
		ps.mu.Lock()
		busy := len(ps.retiring) > 0 || len(ps.pending) > 0 || ps.pendingAll
		ch := ps.synced
		ps.mu.Unlock()
		if !busy {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("timed out waiting for the producer set to settle")
		}
	}
}
