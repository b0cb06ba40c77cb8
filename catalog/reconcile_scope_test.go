package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// waitReconciles waits, on catalog changes and never on a sleep, until the
// loop has made more than passes reconciliation passes and cond holds.
func waitReconciles(t *testing.T, n *Replica, passes uint64, cond func(*lifecycle.State) bool) {
	t.Helper()
	sub := n.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for n.reconciles.Load() <= passes || !cond(n.State()) {
		select {
		case <-sub.C():
		case <-ctx.Done():
			t.Fatalf("timed out: %d reconciliation passes, want more than %d", n.reconciles.Load(), passes)
		case <-time.After(time.Millisecond):
			// A pass that commits nothing publishes no change to wake on.
		}
	}
}

// TestLeaderReconcilesOnlyTheChangedDomains starts domains whose authority
// is a registered node that is no voter, in a catalog of many running paced
// domains: the leader moves each to an eligible authority through a pass
// over the domain the START changed, never over the whole catalog. A
// topology nudge still reconciles the whole catalog.
func TestLeaderReconcilesOnlyTheChangedDomains(t *testing.T) {
	n := openNode(t, Config{})
	ctx := context.Background()
	self := n.Identity()
	propose := func(cmd lifecycle.Command) {
		t.Helper()
		res, err := n.Propose(ctx, cmd)
		require.NoError(t, err)
		require.NoError(t, res.Err())
	}
	propose(registerCmd("other", 5))
	other := lifecycle.Identity{Node: "other", Incarnation: 5}
	for i := range 64 {
		name := fmt.Sprintf("d%03d", i)
		propose(createCmd(name, lifecycle.Paced))
		propose(startCmd(name, &self, 1, 0, 1))
	}
	waitReconciles(t, n, 0, func(*lifecycle.State) bool { return true })
	whole := n.wholeReconciles.Load()

	for i := range 3 {
		name := fmt.Sprintf("moved%d", i)
		propose(createCmd(name, lifecycle.Paced))
		passes := n.reconciles.Load()
		propose(startCmd(name, &other, 1, 0, 1))
		waitReconciles(t, n, passes, func(s *lifecycle.State) bool {
			d, _ := s.Domain(name)
			return d.Authority.Identity() == self
		})
	}
	require.Equal(t, whole, n.wholeReconciles.Load(), "a commit reconciled the whole catalog")

	passes := n.reconciles.Load()
	n.reconcileSoon()
	waitReconciles(t, n, passes, func(*lifecycle.State) bool { return true })
	require.Greater(t, n.wholeReconciles.Load(), whole, "a topology nudge reconciles the whole catalog")
}

// TestReconcileScope checks how changes widen the scope: named domains
// gather, a restore or All makes it whole, and so does one name past
// maxReconcileNames, but not the last name within it.
func TestReconcileScope(t *testing.T) {
	names := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("d", i)
		}
		return out
	}
	tests := []struct {
		name    string
		changes []Change
		whole   bool
		count   int
	}{
		{"named", []Change{{Domains: []string{"a", "b"}}, {Domains: []string{"b", "c"}}}, false, 3},
		{"restore", []Change{{Domains: []string{"a"}}, {Restored: true}}, true, 0},
		{"all", []Change{{All: true}, {Domains: []string{"a"}}}, true, 0},
		{"at the bound", []Change{{Domains: names(maxReconcileNames - 1)}, {Domains: []string{"last"}}}, false, maxReconcileNames},
		{"past the bound", []Change{{Domains: names(maxReconcileNames)}, {Domains: []string{"last"}}}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reconcileScope
			for _, c := range tt.changes {
				r.add(c)
			}
			require.Equal(t, tt.whole, r.whole)
			require.Len(t, r.names, tt.count)
		})
	}
}
