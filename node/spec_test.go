package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// TestSpecRestoreThenStartAtFrontier follows the operator recipe for
// starting from an archived frontier with a new mapping: a default restore,
// then START AT '<frontier>' TIME RATE <rate>. The new generation's origin
// is the archived frontier, its anchor the restoring node's now and its
// rate the one given; the archived mapping is gone.
func TestSpecRestoreThenStartAtFrontier(t *testing.T) {
	src := timesource.NewFake(t0)
	a := sourceCatalog(t, src)
	path := backupPath(t)
	rep, err := backupTo(context.Background(), a, BackupScope{Domain: "prod"}, path)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	archived, ok := rep.Archive.Find("prod")
	require.True(t, ok)
	require.NotNil(t, archived.Frontier, "the running paced domain had accepted a tick")
	frontier := archived.Frontier.Boundary

	fake := timesource.NewFake(t0 + int64(3*time.Hour))
	b := openNode(t, fake, "")
	defer func() { require.NoError(t, b.Close()) }()
	ctx := context.Background()
	_, err = restoreFrom(ctx, b, planner.Restore{Domain: "prod", Path: path})
	require.NoError(t, err)
	d, err := b.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Stopped, d.Status)
	require.Nil(t, d.Mapping)

	out, err := b.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: frontier, Rate: 5}.Request())
	require.NoError(t, err)
	require.Equal(t, archived.Record.Generation+1, out.Domain.Generation)
	require.Equal(t, clock.Mapping{WallStartedAt: fake.Now(), LogicalStart: frontier, Rate: 5}, *out.Domain.Mapping)
	require.NotEqual(t, *archived.Record.Mapping, *out.Domain.Mapping)

	h, err := b.registry.Bind("prod")
	require.NoError(t, err)
	now, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, frontier, now, "the clock starts at the archived frontier")
	obs := waitTick(t, b, "prod", 1)
	require.Equal(t, clockrt.Tick{Generation: out.Domain.Generation, ID: 1, Boundary: frontier, AuthorityUTC: fake.Now()}, obs.Tick)
}

// TestSpecAdvertisedRevisionFollowsInstallation holds the advertisement a
// clock authority delivers progress by: a node advertises a catalog
// revision once every domain clock it holds, authority fence included,
// equals that revision's committed lifecycle (as LifecycleOf maps it), and
// never a revision it has not installed.
func TestSpecAdvertisedRevisionFollowsInstallation(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	require.NoError(t, n.WaitInstalled(ctx))
	require.NotZero(t, n.AdvertisedRevision(), "the node installed the committed domains at Open")

	_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	steps := []struct {
		name string
		run  func() (lifecycle.Outcome, error)
	}{
		{"start", func() (lifecycle.Outcome, error) {
			return n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
		}},
		{"revoke the authority", func() (lifecycle.Outcome, error) {
			d, err := n.Domain("prod")
			require.NoError(t, err)
			res, err := n.catalog.Propose(ctx, lifecycle.Command{Op: lifecycle.OpReassignAuthority, ReassignAuthority: &lifecycle.ReassignAuthority{
				Domain: "prod", ExpectedGeneration: d.Generation, ExpectedFence: d.Authority,
			}})
			require.NoError(t, err)
			require.NoError(t, res.Err())
			return lifecycle.Outcome{Revision: res.Revision, Changed: true}, nil
		}},
		{"stop", func() (lifecycle.Outcome, error) { return n.Stop(ctx, "prod") }},
	}
	for _, s := range steps {
		out, err := s.run()
		require.NoError(t, err, s.name)
		require.NoError(t, n.WaitInstalledRevision(ctx, out.Revision), s.name)
		adv := n.AdvertisedRevision()
		require.GreaterOrEqual(t, adv, out.Revision, s.name)
		require.LessOrEqual(t, adv, n.catalog.Revision(), "%s: never ahead of the catalog", s.name)
		requireInstalledAsCommitted(t, n, s.name)
	}
}

// requireInstalledAsCommitted requires the domain clocks the node holds,
// once it advertises the catalog's current revision, to equal that
// revision's committed lifecycles. The leader's reconciliation may commit
// meanwhile; a read that raced a commit is taken again.
func requireInstalledAsCommitted(t *testing.T, n *Node, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		s := n.catalog.State()
		require.NoError(t, n.WaitInstalledRevision(ctx, s.Revision()), what)
		adv := n.AdvertisedRevision()
		require.GreaterOrEqual(t, adv, s.Revision(), what)
		holds := true
		for _, d := range s.Domains() {
			// The lifecycle the node installs for the committed record:
			// a fence is installed while paced, and a stopped or
			// unassigned clock carries none.
			want := LifecycleOf(d, s.Revision())
			in := n.registry.Current(d.Name)
			if in.State() != want.State || in.Generation() != want.Generation || in.Authority() != want.Authority {
				t.Logf("%s: %s installed %v generation %d authority %v, committed %v generation %d authority %v",
					what, d.Name, in.State(), in.Generation(), in.Authority(), want.State, want.Generation, want.Authority)
				holds = false
			}
		}
		if n.catalog.State().Revision() != s.Revision() {
			continue // a commit raced the reads
		}
		require.True(t, holds, "%s: a domain clock differs from the committed lifecycle of revision %d", what, adv)
		return
	}
}
