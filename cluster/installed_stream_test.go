package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// served is how many requests of route m's peer handler has served.
func served(t *testing.T, m *cluster.Member, route string) float64 {
	t.Helper()
	fams, err := m.Node().MetricsRegistry().Gather()
	require.NoError(t, err)
	var n float64
	for _, f := range fams {
		if f.GetName() != "nspl_interconnect_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route {
					n += s.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// installedRequests is how many installed waits the members served.
func installedRequests(t *testing.T, members []*cluster.Member) float64 {
	var n float64
	for _, m := range members {
		n += served(t, m, "installed")
	}
	return n
}

// streamsUp waits until each of members, which have served a statement,
// follows every other member's installed stream.
func streamsUp(h *testcluster.Cluster, members ...*cluster.Member) {
	h.Eventually(20*time.Second, "the serving members follow every other's installed stream", func() bool {
		for _, m := range members {
			if !cluster.InstalledStreamsUp(m) {
				return false
			}
		}
		return true
	})
}

// createDrop commits statement i of a run through m, a CREATE or a DROP
// of domain, and checks that it returned once every member had installed
// it: it names nobody, and every member holds the domain or not.
func createDrop(t *testing.T, h *testcluster.Cluster, m *cluster.Member, domain string, i int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var unconfirmed []string
	var err error
	if i%2 == 0 {
		res, e := m.Node().CreateDomain(ctx, planner.CreateDomain{Name: domain, Pace: lifecycle.Unpaced})
		unconfirmed, err = res.Unconfirmed, e
	} else {
		res, e := m.Node().DropDomain(ctx, planner.DropDomain{Name: domain})
		unconfirmed, err = res.Unconfirmed, e
	}
	require.NoError(t, err, "statement %d", i)
	require.Empty(t, unconfirmed, "statement %d", i)
	for _, o := range h.Live() {
		_, err := o.Node().Domain(domain)
		if i%2 == 0 {
			require.NoError(t, err, "statement %d on %s", i, o.Node().Name())
		} else {
			require.Error(t, err, "statement %d on %s", i, o.Node().Name())
		}
	}
}

// A member opens its installed streams with its first statement, which
// asks its peers; with the streams up, a statement's completion boundary
// waits on what the peers pushed and asks no peer; with the serving
// node's streams down, it asks each peer through the installed route and
// still returns only once every member installed.
func TestCompletionWaitsOnTheInstalledStreams(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	members := h.StartThree()
	allLive(h)
	leader := h.Leader()
	follower := h.Follower(leader)
	require.False(t, cluster.InstalledStreamsUp(leader), "no streams before the first statement")
	createDrop(t, h, leader, "first", 0)
	createDrop(t, h, follower, "first", 1)
	streamsUp(h, leader, follower)

	asked := installedRequests(t, members)
	for i := range 20 {
		createDrop(t, h, leader, "through-leader", i)
		createDrop(t, h, follower, "through-follower", i)
	}
	require.Equal(t, asked, installedRequests(t, members), "the streams served every completion boundary")

	cluster.StopInstalledStreams(leader)
	for i := range 6 {
		createDrop(t, h, leader, fmt.Sprintf("asked%d", i/2), i)
	}
	require.GreaterOrEqual(t, installedRequests(t, members)-asked, float64(2*3), "each peer was asked once per statement at least")
}

// A member that restarts under a new incarnation gets its stream
// followed again: once the others count it live, their statements wait
// on its new stream instead of asking it.
func TestInstalledStreamsFollowARestartedMember(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{Durable: true})
	h.StartThree()
	allLive(h)
	leader := h.Leader()
	createDrop(t, h, leader, "first", 0)
	streamsUp(h, leader)
	gone := h.FollowersOf(leader)[0]
	name := gone.Node().Name()
	h.Kill(name)
	back := h.Start(name, false, leader.APIAddr())
	allLive(h)
	streamsUp(h, leader)
	members := h.Live()
	require.Contains(t, members, back)
	asked := installedRequests(t, members)
	for i := range 6 {
		createDrop(t, h, leader, "after-restart", i)
	}
	require.Equal(t, asked, installedRequests(t, members), "the restarted member's new stream served the boundary")
}
