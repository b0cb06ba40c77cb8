package node

import (
	"context"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/stretchr/testify/require"
)

// TestReopenInstallsTheCommittedAnchor: a node that installs a paced
// domain from a state whose revision is later than the domain's own (a
// reopen restoring its snapshot after other commits, as a joiner that
// receives a snapshot does) installs the committed mapping, anchor
// included, not one derived from the revision it installs at.
func TestReopenInstallsTheCommittedAnchor(t *testing.T) {
	dir := t.TempDir()
	fake := timesource.NewFake(t0)
	ctx := context.Background()

	n := openNode(t, fake, dir)
	_, err := n.CreateDomain(ctx, lifecycle.CreateDomain{Name: "prod", Pace: lifecycle.Paced, Period: uint64(time.Second)})
	require.NoError(t, err)
	fake.Advance(3 * time.Second)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	for _, name := range []string{"a", "b", "c"} {
		_, err = n.CreateDomain(ctx, lifecycle.CreateDomain{Name: name})
		require.NoError(t, err)
	}
	committed, err := n.Domain("prod")
	require.NoError(t, err)
	require.Greater(t, n.CatalogRevision(), committed.Revision, "later commits moved the catalog past the domain's revision")
	require.NoError(t, n.Close())

	n = openNode(t, fake, dir)
	defer func() { require.NoError(t, n.Close()) }()
	mapping, ok := n.Installation("prod").Mapping()
	require.True(t, ok, "the reopened node installed the paced mapping")
	require.Equal(t, *committed.Mapping, mapping, "origin, anchor and rate are the committed ones")
}
