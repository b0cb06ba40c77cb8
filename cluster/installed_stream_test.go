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
		res, e := m.Node().CreateDomain(ctx, lifecycle.CreateDomain{Name: domain, Pace: lifecycle.Unpaced})
		unconfirmed, err = res.Unconfirmed, e
	} else {
		res, e := m.Node().DropDomain(ctx, lifecycle.DropDomain{Name: domain})
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

// unasked runs n statements, createDrop i of domain through each of
// through in turn, and returns how many of them asked no peer through the
// installed route. A stream may go down for a moment while the machine is
// loaded (a member seen not live, a quiet stream reopened), and a
// statement then asks that peer, as it must; the others ask nobody.
func unasked(t *testing.T, h *testcluster.Cluster, members []*cluster.Member, n int, domain string, through ...*cluster.Member) int {
	t.Helper()
	clean := 0
	for i := range n {
		for _, m := range through {
			before := installedRequests(t, members)
			createDrop(t, h, m, fmt.Sprintf("%s-%s", domain, m.Node().Name()), i)
			if installedRequests(t, members) == before {
				clean++
			}
		}
	}
	t.Logf("%d of %d statements asked no peer", clean, n*len(through))
	return clean
}

// A member opens its installed streams with its first statement, which
// asks its peers; with the streams up, a statement's completion boundary
// waits on what the peers pushed and asks no peer (at least half of them
// must; any other may have met a stream down for a moment, see unasked),
// where asking every peer per statement would make none; with the serving
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

	require.GreaterOrEqual(t, unasked(t, h, members, 20, "streamed", leader, follower), 20,
		"the streams served the completion boundary of most statements")

	asked := installedRequests(t, members)
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
	require.GreaterOrEqual(t, unasked(t, h, members, 6, "after-restart", leader), 3,
		"the restarted member's new stream served the boundary of most statements")
}
