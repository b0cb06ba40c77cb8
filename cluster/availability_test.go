package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

func TestAvailabilityMergesHealthAndGossip(t *testing.T) {
	const interval = time.Second
	n2 := lifecycle.NodeIncarnation{Node: "n2", Incarnation: 20, Registered: 3}
	type step struct {
		gossip  *bool   // ObserveGossip(n2, *gossip)
		health  *uint64 // ObserveHealth(n2, *health, *health != 0)
		advance time.Duration
	}
	yes, no := true, false
	inc := func(v uint64) *uint64 { return &v }
	cases := []struct {
		name  string
		steps []step
		live  bool
	}{
		{"never observed", nil, true},
		{"gossip lost, no health", []step{{gossip: &no}}, false},
		{"gossip resumed", []step{{gossip: &no}, {gossip: &yes}}, true},
		{"fresh healthy observation keeps it through a gossip loss", []step{{health: inc(20)}, {gossip: &no, advance: interval - 1}}, true},
		{"healthy observation goes stale at the interval: gossip decides", []step{{health: inc(20)}, {gossip: &no, advance: interval}}, false},
		{"stale healthy observation, gossip live", []step{{health: inc(20)}, {advance: interval}}, true},
		{"fresh unhealthy observation with gossip live", []step{{health: inc(0)}, {advance: interval - 1}}, false},
		{"unhealthy observation goes stale: gossip live again decides", []step{{health: inc(0)}, {advance: interval}}, true},
		{"another incarnation answered: the registered one is gone", []step{{health: inc(21)}}, false},
		{"another incarnation answered long ago", []step{{health: inc(21)}, {advance: interval + 1}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := timesource.NewFake(0)
			changes := 0
			a := NewAvailability(fake, "n1", interval, func() { changes++ })
			for _, s := range c.steps {
				fake.Advance(s.advance)
				if s.gossip != nil {
					a.ObserveGossip("n2", *s.gossip)
				}
				if s.health != nil {
					a.ObserveHealth("n2", *s.health, *s.health != 0)
				}
			}
			require.Equal(t, c.live, a.Live(n2))
			require.True(t, a.Live(lifecycle.NodeIncarnation{Node: "n1", Incarnation: 1}), "a node is always available to itself")
		})
	}
}

// TestAvailabilityReportsChangesAndStaleness builds the view as a member
// with the default configuration does (interval zero): a health
// observation stays fresh for the documented one second.
func TestAvailabilityReportsChangesAndStaleness(t *testing.T) {
	const interval = time.Second // the documented default, not the constant
	fake := timesource.NewFake(0)
	changes := 0
	a := NewAvailability(fake, "n1", 0, func() { changes++ })
	require.Equal(t, interval, a.Interval())
	a.ObserveGossip("n2", true) // first verdict is live: nothing changed
	require.Equal(t, 0, changes)
	a.ObserveGossip("n2", false)
	a.ObserveGossip("n2", false)
	require.Equal(t, 1, changes)
	a.ObserveHealth("n2", 5, true)
	a.ObserveHealth("n2", 5, true) // same verdict
	require.Equal(t, 2, changes)
	require.Equal(t, interval, a.StaleAfter())
	fake.Advance(interval - time.Millisecond)
	require.Equal(t, time.Millisecond, a.StaleAfter())
	fake.Advance(time.Millisecond)
	require.Zero(t, a.StaleAfter())
	a.Forget("n2")
	require.Equal(t, 3, changes)
	require.True(t, a.Live(lifecycle.NodeIncarnation{Node: "n2", Incarnation: 9}))
}

func TestAvailableCollapsesToTheRegisteredIncarnations(t *testing.T) {
	s := lifecycle.NewState()
	for i, name := range []string{"n1", "n2", "n3"} {
		r := s.Apply(lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
			Name: name, Incarnation: uint64(10 + i), RaftID: name, RaftAddr: "r", APIAddr: "a"}})
		require.NoError(t, r.Err())
	}
	// n2 restarted: the registry holds only its newest incarnation.
	r := s.Apply(lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
		Name: "n2", Incarnation: 99, RaftID: "n2", RaftAddr: "r", APIAddr: "a"}})
	require.NoError(t, r.Err())
	fake := timesource.NewFake(0)
	a := NewAvailability(fake, "n1", time.Second, nil)
	a.ObserveHealth("n2", 99, true)
	a.ObserveHealth("n3", 12, false)
	got := a.Available(s)
	var names []string
	for _, ni := range got {
		names = append(names, ni.Node)
		if ni.Node == "n2" {
			require.Equal(t, uint64(99), ni.Incarnation)
		}
	}
	require.Equal(t, []string{"n1", "n2"}, names)
}
