package testcluster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestThreeMembersLeaderFollowersKill checks the bookkeeping tests rely
// on: members in start order, one confirmed leader and the others its
// followers, a killed member gone from every view, and Close closing the
// rest (goleak checks that nothing outlives them).
func TestThreeMembersLeaderFollowersKill(t *testing.T) {
	c := New(t, Options{})
	members := c.StartThree()
	require.Len(t, members, 3)
	for i, name := range []string{"n1", "n2", "n3"} {
		require.Equal(t, name, members[i].Node().Name())
		require.Same(t, members[i], c.Member(name))
	}
	require.Equal(t, members, c.Live())

	leader := c.Leader()
	followers := c.FollowersOf(leader)
	require.Len(t, followers, 2)
	require.NotContains(t, followers, leader)
	require.Same(t, followers[1], c.Follower(leader))

	victim := c.Follower(leader).Node().Name()
	c.Kill(victim)
	require.Nil(t, c.Member(victim))
	require.Len(t, c.Live(), 2)
	require.Len(t, c.FollowersOf(leader), 1)

	require.NoError(t, c.Close())
	require.Empty(t, c.Live())
	require.NoError(t, c.Close(), "a second Close finds nothing to close")
}
