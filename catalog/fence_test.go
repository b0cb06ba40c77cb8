package catalog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

func reassign(node string, incarnation uint64) lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpReassignAuthority, ReassignAuthority: &lifecycle.ReassignAuthority{
		Domain: "d", ExpectedGeneration: 1, ExpectedFence: lifecycle.AuthorityFence{Node: node, Incarnation: incarnation, Revision: 1},
	}}
}

func TestFenceWait(t *testing.T) {
	require.Equal(t, time.Second+125*time.Millisecond, FenceWait(time.Second))
	// The production defaults: a dead leader's clocks move 337.5 ms after
	// its successor is elected.
	require.Equal(t, 300*time.Millisecond, DefaultAuthorityLease)
	require.Equal(t, 337500*time.Microsecond, FenceWait(DefaultAuthorityLease))
	require.Equal(t, 200*time.Millisecond, DefaultHeartbeatTimeout)
	require.Equal(t, DefaultHeartbeatTimeout, DefaultLeaderLeaseTimeout, "the leader lease may be at most the heartbeat timeout, which FenceWait relies on")
}

// The leader loop retries a pass whose reassignment waits as the wait
// ends, not up to a retry interval later.
func TestRetryWait(t *testing.T) {
	tests := []struct {
		name       string
		left, want time.Duration
	}{
		{"nothing waits", 0, RetryInterval},
		{"a wait ends well inside the interval", time.Millisecond, time.Millisecond},
		{"just inside the interval", RetryInterval - time.Nanosecond, RetryInterval - time.Nanosecond},
		{"at the interval", RetryInterval, RetryInterval},
		{"just outside the interval", RetryInterval + time.Nanosecond, RetryInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, retryWait(tt.left))
		})
	}
}

func TestFencesDue(t *testing.T) {
	const wait = time.Second
	tests := []struct {
		name string
		// first is when the authority was first seen ineligible (in
		// term 1); at is when the reassignment is asked for.
		first, at time.Duration
		term      uint64
		cmd       lifecycle.Command
		due       bool
		left      time.Duration
	}{
		{"at the first sighting", 5 * time.Second, 5 * time.Second, 1, reassign("n3", 7), false, wait},
		{"just inside the wait", 5 * time.Second, 6*time.Second - time.Nanosecond, 1, reassign("n3", 7), false, time.Nanosecond},
		{"at the wait", 5 * time.Second, 6 * time.Second, 1, reassign("n3", 7), true, 0},
		{"after the wait", 5 * time.Second, 9 * time.Second, 1, reassign("n3", 7), true, 0},
		{"a new term waits in full", 5 * time.Second, 9 * time.Second, 2, reassign("n3", 7), false, wait},
		{"another incarnation waits in full", 5 * time.Second, 9 * time.Second, 1, reassign("n3", 8), false, wait},
		{"an unassigned authority needs no wait", 5 * time.Second, 5 * time.Second, 1, reassign("", 0), true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f fences
			due, _ := f.due(1, tt.first, wait, reassign("n3", 7))
			require.False(t, due)
			f.soonest = 0
			due, left := f.due(tt.term, tt.at, wait, tt.cmd)
			require.Equal(t, tt.due, due)
			require.Equal(t, tt.left, left)
			// The loop's next retry comes no later than the wait's end.
			require.Equal(t, tt.left, f.soonest)
		})
	}
}

// The soonest wait of a pass is the least left of the reassignments that
// wait in it.
func TestFencesSoonest(t *testing.T) {
	const wait = time.Second
	var f fences
	due, _ := f.due(1, 0, wait, reassign("n3", 7))
	require.False(t, due)
	due, _ = f.due(1, 600*time.Millisecond, wait, reassign("n2", 4))
	require.False(t, due)
	require.Equal(t, wait, f.soonest)
	f.soonest = 0
	due, left := f.due(1, 700*time.Millisecond, wait, reassign("n2", 4))
	require.False(t, due)
	require.Equal(t, 900*time.Millisecond, left)
	due, left = f.due(1, 700*time.Millisecond, wait, reassign("n3", 7))
	require.False(t, due)
	require.Equal(t, 300*time.Millisecond, left)
	require.Equal(t, 300*time.Millisecond, f.soonest)
}

func TestFencesForget(t *testing.T) {
	const wait = time.Second
	var f fences
	due, _ := f.due(1, 0, wait, reassign("n3", 7))
	require.False(t, due)
	// n3 became eligible again: a later loss waits in full.
	f.forget(map[lifecycle.Identity]bool{})
	due, left := f.due(1, 2*time.Second, wait, reassign("n3", 7))
	require.False(t, due)
	require.Equal(t, wait, left)
	// Still pending: the sighting is kept.
	f.forget(map[lifecycle.Identity]bool{{Node: "n3", Incarnation: 7}: true})
	due, _ = f.due(1, 3*time.Second, wait, reassign("n3", 7))
	require.True(t, due)
	// No wait configured (an embedded node): due at once.
	var g fences
	due, _ = g.due(1, 0, 0, reassign("n3", 7))
	require.True(t, due)
}
