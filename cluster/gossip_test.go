package cluster

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestLeaderGossipNamesAStoppedFollower holds the gossip half of
// availability: the leader's failed heartbeats to a stopped follower reach
// its Availability under the follower's registered name.
func TestLeaderGossipNamesAStoppedFollower(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := newHarness(t, false)
	h.startThree()
	leader := h.leader()
	victim := h.follower(leader).cfg.Node
	h.kill(victim)
	h.eventually(20*time.Second, "gossip marking "+victim+" dead on the leader", func() bool {
		leader.avail.mu.Lock()
		defer leader.avail.mu.Unlock()
		live, seen := leader.avail.gossip[victim]
		return seen && !live
	})
}
