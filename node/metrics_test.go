package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// gauge returns the value of the family's sample labelled domain, and
// whether there is one.
func gauge(t *testing.T, n *Node, family, domain string) (float64, bool) {
	t.Helper()
	fams, err := n.MetricsRegistry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "domain" && l.GetValue() == domain {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

func TestDomainGauges(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	require.NoError(t, n.WaitInstalled(ctx))
	_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, ok := gauge(t, n, "nspl_domain_authority", "prod")
	require.False(t, ok, "a stopped domain has no authority gauge")

	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: 0, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "prod", 1)
	parked(t, fake, time.Second)
	fake.Advance(250 * time.Millisecond)

	for _, tt := range []struct {
		family string
		want   float64
	}{
		{"nspl_domain_authority", 1},          // the embedded node is the authority
		{"nspl_domain_tick_lag_seconds", .25}, // tick 1 was emitted at t0
		{"nspl_domain_tick_interval_seconds", 1},
	} {
		v, ok := gauge(t, n, tt.family, "prod")
		require.True(t, ok, tt.family)
		require.Equal(t, tt.want, v, tt.family)
	}

	// A tick interval is UTC: PERIOD over TIME RATE.
	_, err = n.CreateDomain(ctx, paced("fast", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "fast", planner.Start{Mode: planner.StartAtTime, At: 0, Rate: 4}.Request())
	require.NoError(t, err)
	v, ok := gauge(t, n, "nspl_domain_tick_interval_seconds", "fast")
	require.True(t, ok)
	require.Equal(t, .25, v)

	// The node's consensus view: a lone node leads, knows its leader, has
	// its quorum and every running paced domain has its authority.
	for _, tt := range []struct {
		family string
		want   float64
	}{
		{"nspl_leader", 1},
		{"nspl_leader_known", 1},
		{"nspl_quorum", 1},
		{"nspl_domains_authority_unassigned", 0},
	} {
		v, ok := nodeGauge(t, n, tt.family)
		require.True(t, ok, tt.family)
		require.Equal(t, tt.want, v, tt.family)
	}
}

// nodeGauge returns the value of the unlabelled gauge family, and whether
// the registry has it.
func nodeGauge(t *testing.T, n *Node, family string) (float64, bool) {
	t.Helper()
	fams, err := n.MetricsRegistry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == family && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestReady(t *testing.T) {
	fake := timesource.NewFake(t0)
	unopened, err := New(Config{Logger: quietLogger(), TimeSource: fake})
	require.NoError(t, err)
	open := openNode(t, fake, "")
	closed := openNode(t, fake, "")
	require.NoError(t, closed.Close())
	defer func() { require.NoError(t, open.Close()) }()

	for _, tt := range []struct {
		name    string
		n       *Node
		wantErr string
	}{
		{"unopened", unopened, "not installed"},
		{"open", open, ""},
		{"closed", closed, "closed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.n.Ready()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNotReady)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestNotReadyWhileAPacedClockHasNoAuthority: a running paced domain
// whose committed authority is unassigned (its node left, no live voter
// to take it) makes the node not ready, naming it, until the domain has an
// authority again or stops.
func TestNotReadyWhileAPacedClockHasNoAuthority(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	require.NoError(t, n.Ready())

	m := clock.Mapping{WallStartedAt: t0, LogicalStart: t0, Rate: 1}
	running := lifecycle.Domain{Name: "orphan", Pace: lifecycle.Paced, Period: uint64(time.Second), Status: lifecycle.Running, Generation: 1, Mapping: &m}
	install := func(d lifecycle.Domain, rev uint64) {
		n.installMu.Lock()
		defer n.installMu.Unlock()
		n.installOneLocked(d, rev)
	}
	install(running, 100)
	err := n.Ready()
	require.ErrorIs(t, err, ErrNotReady)
	require.ErrorContains(t, err, "1 running paced domain(s), 'orphan' first, have no clock authority assigned")
	v, ok := nodeGauge(t, n, "nspl_domains_authority_unassigned")
	require.True(t, ok)
	require.Equal(t, 1.0, v, "the gauge counts the domain without an authority")

	assigned := running
	assigned.Authority = lifecycle.AuthorityFence{Node: n.Name(), Incarnation: n.Identity().Incarnation, Revision: 101}
	install(assigned, 101)
	require.NoError(t, n.Ready(), "an assigned authority")
	v, _ = nodeGauge(t, n, "nspl_domains_authority_unassigned")
	require.Equal(t, 0.0, v)

	install(running, 102)
	require.Error(t, n.Ready())
	stopped := running
	stopped.Status, stopped.Mapping = lifecycle.Stopped, nil
	install(stopped, 103)
	require.NoError(t, n.Ready(), "a stopped domain has no clock to own")

	install(running, 104)
	require.Error(t, n.Ready())
	// An older revision the registry refuses changes nothing.
	install(assigned, 50)
	require.Error(t, n.Ready(), "a refused older installation leaves the domain without an authority")
	n.installMu.Lock()
	n.removeOneLocked("orphan")
	n.installMu.Unlock()
	require.NoError(t, n.Ready(), "a dropped domain")
}
