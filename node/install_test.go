package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// settled waits until the producer set's loop has passed over every
// installed change: nothing is pending.
func settled(t *testing.T, n *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		n.producers.mu.Lock()
		idle := len(n.producers.pending) == 0 && !n.producers.pendingAll && len(n.producers.retiring) == 0
		synced := n.producers.synced
		n.producers.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-synced:
		case <-ctx.Done():
			t.Fatal("timed out waiting for the producer set to settle")
		}
	}
}

// TestCommitInstallsOnlyWhatChanged runs each lifecycle statement in a
// catalog of many domains, half of them running paced with a producer on
// this node, and checks that the node installed exactly the domain the
// statement changed and that the producer set looked at no other: a commit
// that re-installed, or re-examined, the unchanged domains fails it.
func TestCommitInstallsOnlyWhatChanged(t *testing.T) {
	const domains = 64 // above the flat table, and far above one
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	for i := range domains {
		name := fmt.Sprintf("d%03d", i)
		_, err := n.CreateDomain(ctx, paced(name, time.Hour, 0))
		require.NoError(t, err)
		if i%2 == 0 {
			_, err = n.Start(ctx, name, planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
		}
	}
	settled(t, n)
	steps := []struct {
		name string
		run  func() error
		// examined is how many times the producer set looks at a domain's
		// installation: once per pass over the changed domain, once more
		// when it has a running producer whose currency the installation
		// checks, and a pass again when a retirement ends. A whole pass
		// would look at every domain.
		examined uint64
	}{
		{"create", func() error { _, err := n.CreateDomain(ctx, paced("new", time.Hour, 0)); return err }, 1},
		{"start", func() error {
			_, err := n.Start(ctx, "new", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			return err
		}, 1},
		{"alter placement", func() error { _, err := n.AlterPlacement(ctx, "new", lifecycle.SuggestSeparation); return err }, 2},
		{"stop", func() error { _, err := n.Stop(ctx, "new"); return err }, 3},
		{"drop", func() error { _, err := n.DropDomain(ctx, lifecycle.DropDomain{Name: "new"}); return err }, 1},
		{"stop another", func() error { _, err := n.Stop(ctx, "d010"); return err }, 3},
		{"start another", func() error {
			_, err := n.Start(ctx, "d011", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			return err
		}, 1},
	}
	for _, st := range steps {
		installs, examined := n.installs.Load(), n.producers.examined.Load()
		require.NoError(t, st.run(), st.name)
		settled(t, n)
		require.Equal(t, uint64(1), n.installs.Load()-installs, "%s: domains installed", st.name)
		require.Equal(t, st.examined, n.producers.examined.Load()-examined, "%s: installations the producer set examined", st.name)
	}
	// What the statements left is what the catalog holds.
	requireInstalledAsCommitted(t, n, "after the statements")
	_, ok := n.Producing("d011")
	require.True(t, ok, "the started domain has its producer")
	_, ok = n.Producing("d010")
	require.False(t, ok, "the stopped domain has none")
}

// TestRestoredChangeInstallsTheWholeCatalog delivers a snapshot restore's
// change, which names no domain: the node reconciles the whole catalog,
// installing what the restored state holds and removing what it lacks.
func TestRestoredChangeInstallsTheWholeCatalog(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	_, err := n.CreateDomain(ctx, paced("kept", time.Hour, 0))
	require.NoError(t, err)
	_, err = n.CreateDomain(ctx, paced("gone", time.Hour, 0))
	require.NoError(t, err)

	// A state one revision ahead, as a restored snapshot would bring it:
	// "gone" dropped and "came" created, which no change named.
	restored := n.catalog.State().Clone()
	require.True(t, restored.Apply(lifecycle.Command{Op: lifecycle.OpDropDomain, DropDomain: &lifecycle.DropDomain{Name: "gone"}}).Changed)
	require.True(t, restored.Apply(lifecycle.Command{Op: lifecycle.OpCreateDomain, CreateDomain: &lifecycle.CreateDomain{
		Name: "came", Pace: lifecycle.Unpaced}}).Changed)
	n.onChange(catalog.Change{Revision: restored.Revision(), State: restored, Restored: true})
	require.Equal(t, []string{"came", "kept"}, n.registry.Domains())
	require.Equal(t, clockrt.StateStopped, n.registry.Current("came").State())

	// The same state named by its domains installs the same way, and a
	// change naming a domain it lacks removes it.
	n.onChange(catalog.Change{Revision: restored.Revision(), State: restored, Domains: []string{"kept"}})
	require.Equal(t, []string{"came", "kept"}, n.registry.Domains())
}

// TestReopenInstallsTheCatalogOnce reopens a data directory whose catalog
// a snapshot holds: the snapshot's restore installs every domain once, and
// Open, finding the registry caught up, does not install them again.
func TestReopenInstallsTheCatalogOnce(t *testing.T) {
	const domains = 40
	dir := t.TempDir()
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, dir)
	ctx := context.Background()
	for i := range domains {
		_, err := n.CreateDomain(ctx, paced(fmt.Sprintf("d%02d", i), time.Hour, 0))
		require.NoError(t, err)
	}
	require.NoError(t, n.catalog.Snapshot())
	require.NoError(t, n.Close())

	n = openNode(t, fake, dir)
	defer func() { require.NoError(t, n.Close()) }()
	require.Len(t, n.registry.Domains(), domains)
	require.Equal(t, uint64(domains), n.installs.Load(), "domains installed by the restore and Open together")
	requireInstalledAsCommitted(t, n, "after reopening")
}

// TestOlderRevisionNeverInstalledEitherPath delivers, late, an older
// catalog state both as a change that names its domains and as a snapshot
// restore: neither installs it, so the running domain keeps its
// installation and the dropped one stays dropped.
func TestOlderRevisionNeverInstalledEitherPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *lifecycle.State) catalog.Change
	}{
		{"named domains", func(s *lifecycle.State) catalog.Change {
			return catalog.Change{Revision: s.Revision(), State: s, Domains: []string{"prod", "gone"}}
		}},
		{"snapshot restore", func(s *lifecycle.State) catalog.Change {
			return catalog.Change{Revision: s.Revision(), State: s, Restored: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := openNode(t, timesource.NewFake(t0), "")
			defer func() { require.NoError(t, n.Close()) }()
			ctx := context.Background()
			_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
			require.NoError(t, err)
			_, err = n.CreateDomain(ctx, paced("gone", time.Second, 0))
			require.NoError(t, err)
			created := n.catalog.State()
			_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
			_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "gone"})
			require.NoError(t, err)
			prod := n.registry.Current("prod")
			installs := n.installs.Load()

			n.onChange(tc.change(created))
			require.Same(t, prod, n.registry.Current("prod"), "the running domain keeps its installation")
			require.Equal(t, []string{"prod"}, n.registry.Domains(), "the dropped domain stays dropped")
			require.Equal(t, installs, n.installs.Load(), "nothing was installed")
		})
	}
}
