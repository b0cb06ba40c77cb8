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

// maintenanceBound bounds one maintenance statement, elections included:
// the node's commit retries through a new leader.
const maintenanceBound = 30 * time.Second

// TestCordonKeepsNewAuthoritiesAway cordons one member through a follower:
// every member agrees on the committed mark, and no domain started after it
// gets that member as its authority, whatever its hash would pick.
func TestCordonKeepsNewAuthoritiesAway(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	via := h.Follower(leader)
	cordoned := leader.Node().Name() // the leader too gives no authority to itself
	ctx, cancel := context.WithTimeout(context.Background(), maintenanceBound)
	defer cancel()
	out, err := via.Node().Cordon(ctx, cordoned, true)
	require.NoError(t, err)
	require.True(t, out.Changed)
	for _, m := range h.Live() {
		require.NoError(t, m.Node().WaitInstalledRevision(ctx, out.Revision))
		n, ok := m.Node().CatalogState().Node(cordoned)
		require.True(t, ok)
		require.True(t, n.Cordoned, "on %s", m.Node().Name())
	}
	for i := range 8 {
		d := startPaced(t, via, fmt.Sprintf("c%d", i), time.Second)
		require.NotEqual(t, cordoned, d.Authority.Node, "domain %s was given the cordoned node", d.Name)
	}
	st := via.Status().Wire()
	for _, n := range st.Nodes {
		if n.Name == cordoned {
			require.Equal(t, lifecycle.MaintenanceCordoned, n.Maintenance)
		} else {
			require.Empty(t, n.Maintenance)
		}
	}
	out, err = via.Node().Cordon(ctx, cordoned, false)
	require.NoError(t, err)
	require.True(t, out.Changed)
}

// TestDrainMovesAuthorityWithTicksContinuing drains the node that owns a
// running paced clock while a third member watches its ticks. The drain
// moves the authority to another member in one hand-over, and the watcher
// MEASURES the gap: the largest step between consecutive tick ids it
// accepted across the hand-over. A tick id is the domain-time period
// index, so a step of 1 is no tick lost and each further unit is one period
// the hand-over took; the bound is one period plus the hand-off, a step of
// at most 2.
func TestDrainMovesAuthorityWithTicksContinuing(t *testing.T) {
	const period = 300 * time.Millisecond
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	d := startPaced(t, h.Follower(leader), "drained", period)
	owner := d.Authority.Node
	var watcher *cluster.Member
	for _, m := range h.Live() {
		if m.Node().Name() != owner {
			watcher = m
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), maintenanceBound)
	defer cancel()
	require.NoError(t, watcher.Node().WaitInstalledRevision(ctx, d.Revision))
	obs, err := watcher.Node().Observe("drained")
	require.NoError(t, err)

	type result struct {
		moves []lifecycle.AuthorityMove
		err   error
	}
	done := make(chan result, 1)
	var (
		last, maxStep, before, after uint64
		drained                      *result
		lastAt, handoverAt           time.Time
		maxInterval                  time.Duration
	)
	for drained == nil || after < 3 {
		o := obs.Read()
		if id := o.Tick.ID; id > last {
			now := time.Now()
			if last != 0 {
				maxStep = max(maxStep, id-last)
				maxInterval = max(maxInterval, now.Sub(lastAt))
			}
			last, lastAt = id, now
			switch {
			case drained != nil:
				after++
			case before < 3:
				before++
				if before == 3 {
					handoverAt = now
					go func() { // owned: ends when the drain returns
						moves, err := watcher.Node().Drain(ctx, owner)
						done <- result{moves, err}
					}()
				}
			}
		}
		select {
		case r := <-done:
			drained = &r
			require.NoError(t, r.err)
			continue
		default:
		}
		waitCtx, stop := context.WithTimeout(ctx, 50*time.Millisecond)
		err := obs.Wait(waitCtx)
		stop()
		require.NoError(t, ctx.Err(), "ticks stopped: %d before the drain, %d after it (newest id %d)", before, after, last)
		_ = err // a timeout only re-checks the drain
	}
	require.Len(t, drained.moves, 1)
	mv := drained.moves[0]
	require.Equal(t, "drained", mv.Domain)
	require.Equal(t, owner, mv.From.Node)
	require.NotEqual(t, owner, mv.To.Node)
	got := domainOn(t, watcher, "drained")
	require.Equal(t, mv.To, got.Authority.Identity())
	require.Equal(t, d.Generation, got.Generation, "a drain moves the authority, never the generation")
	require.Equal(t, d.Mapping, got.Mapping)
	t.Logf("drain of %s moved 'drained' to %s; largest tick-id step across the hand-over %d (1 = no tick lost), largest interval between tick deliveries %s at period %s (the drain and three ticks after it took %s)",
		owner, mv.To.Node, maxStep, maxInterval.Round(time.Millisecond), period, time.Since(handoverAt).Round(time.Millisecond))
	require.LessOrEqual(t, maxStep, uint64(2), "the hand-over lost more than one tick period")
	st := watcher.Status().Wire()
	for _, n := range st.Nodes {
		if n.Name == owner {
			require.Equal(t, lifecycle.MaintenanceCordoned, n.Maintenance, "a drained node is cordoned and owns nothing")
		}
	}
	// A second drain has nothing left to move.
	moves, err := leader.Node().Drain(ctx, owner)
	require.NoError(t, err)
	require.Empty(t, moves)
}

// TestCordonSurvivesRestart restarts a cordoned member on its data
// directory: its new incarnation registers still cordoned, on every member.
func TestCordonSurvivesRestart(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{Durable: true})
	h.StartThree()
	ctx, cancel := context.WithTimeout(context.Background(), maintenanceBound)
	defer cancel()
	_, err := h.Member("n1").Node().Cordon(ctx, "n3", true)
	require.NoError(t, err)
	before := h.Member("n3").Node().Identity().Incarnation
	h.Kill("n3")
	_, err = h.StartConfig(h.Config("n3", false))
	require.NoError(t, err)
	h.Eventually(10*time.Second, "n3's new incarnation registered", func() bool {
		for _, m := range h.Live() {
			n, ok := m.Node().CatalogState().Node("n3")
			if !ok || n.Incarnation == before {
				return false
			}
		}
		return true
	})
	for _, m := range h.Live() {
		n, _ := m.Node().CatalogState().Node("n3")
		require.True(t, n.Cordoned, "on %s after n3 restarted", m.Node().Name())
	}
}
