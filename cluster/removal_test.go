package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

// TestRemovalThatWouldLeaveNoQuorumIsRefused: leave and remove refuse,
// changing nothing, where the cluster would be left with no voter or with
// fewer live voters than a quorum of those left; the removal that leaves a
// quorum goes through.
func TestRemovalThatWouldLeaveNoQuorumIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("the only voter", func(t *testing.T) {
		h := testcluster.New(t, testcluster.Options{})
		solo := h.Start("n1", true)
		d := startPaced(t, solo, "solo_clock", 20*time.Millisecond)
		err := solo.Leave(ctx)
		require.ErrorIs(t, err, cluster.ErrRemovalRefused)
		require.ErrorContains(t, err, `node "n1" is the cluster's only voter`)
		require.ErrorContains(t, err, "nothing was changed")
		// Nothing changed: still registered, still the voter, still the
		// authority, and still taking writes.
		_, registered := solo.Node().CatalogState().Node("n1")
		require.True(t, registered)
		servers, err := solo.Node().Servers()
		require.NoError(t, err)
		require.Len(t, servers, 1)
		require.True(t, servers[0].Voter)
		require.Equal(t, d.Authority, domainOn(t, solo, "solo_clock").Authority)
		_, err = solo.Node().CreateDomain(ctx, lifecycle.CreateDomain{Name: "after_refusal"})
		require.NoError(t, err)
	})

	t.Run("a quorum of the voters left", func(t *testing.T) {
		h := testcluster.New(t, testcluster.Options{})
		h.StartThree()
		allLive(h)
		leader := h.Leader()
		followers := h.FollowersOf(leader)
		gone, other := followers[0], followers[1]
		goneName := gone.Node().Name()
		h.Kill(goneName)
		h.Eventually(20*time.Second, "the leader to find the killed member gone", func() bool {
			n, ok := cluster.PeersLive(leader)
			return n == 2 && !ok
		})
		// Removing the live follower would leave the leader and the dead
		// member: one live voter of two, short of the two a quorum needs.
		err := leader.Remove(ctx, other.Node().Name())
		require.ErrorIs(t, err, cluster.ErrRemovalRefused)
		require.ErrorContains(t, err, "would leave 2 voters of which 1 are live, fewer than the 2 a quorum of them needs")
		servers, err := leader.Node().Servers()
		require.NoError(t, err)
		require.Len(t, servers, 3, "nothing was changed")
		_, registered := leader.Node().CatalogState().Node(other.Node().Name())
		require.True(t, registered)
		// An operator's remove of a live node is refused, changing nothing:
		// it should leave.
		err = leader.RemoveNode(ctx, other.Node().Name(), false)
		require.ErrorIs(t, err, cluster.ErrNodeLive)
		require.ErrorContains(t, err, "nspl leave")
		require.ErrorContains(t, err, "--force")
		err = other.RemoveNode(ctx, other.Node().Name(), false)
		require.ErrorIs(t, err, cluster.ErrNodeLive, "a member finds itself live")
		// Forced, the live one is still refused here for the quorum.
		require.ErrorIs(t, leader.RemoveNode(ctx, other.Node().Name(), true), cluster.ErrRemovalRefused)
		// Removing the dead one leaves two live voters: it goes through,
		// without force.
		require.NoError(t, leader.RemoveNode(ctx, goneName, false))
		servers, err = leader.Node().Servers()
		require.NoError(t, err)
		require.Len(t, servers, 2)
	})
}
