package cluster_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
)

// TestLeaderGossipNamesAStoppedFollower holds the gossip half of
// availability: the leader's failed heartbeats to a stopped follower reach
// its Availability under the follower's registered name.
func TestLeaderGossipNamesAStoppedFollower(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	victim := h.Follower(leader).Node().Name()
	h.Kill(victim)
	h.Eventually(20*time.Second, "gossip marking "+victim+" dead on the leader", func() bool {
		live, seen := cluster.GossipVerdict(leader, victim)
		return seen && !live
	})
}
