package testcluster

import (
	"testing"
	"time"

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

// TestClocksAreTheMembersTimeSources: with Options.Clocks a member runs on
// its Clock, stepped UTC and all, and a restarted member gets the same
// clock back; without it there is none.
func TestClocksAreTheMembersTimeSources(t *testing.T) {
	require.Nil(t, New(t, Options{}).Clock("n1"))

	c := New(t, Options{Clocks: true, Durable: true})
	n1 := c.Start("n1", true)
	clk := c.Clock("n1")
	require.NotNil(t, clk)
	require.Same(t, clk, n1.Node().TimeSource())
	clk.Step(time.Hour)
	require.Greater(t, n1.Node().TimeSource().Now(), time.Now().Add(50*time.Minute).UnixNano(), "the member reads the stepped UTC")

	c.Kill("n1")
	require.Same(t, clk, c.Start("n1", false).Node().TimeSource(), "a restart keeps the member's clock")
	require.NoError(t, c.Close())
}
