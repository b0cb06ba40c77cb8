package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/wire"
)

// An authority whose UTC steps 3 s forward produces tick ids real time has
// not reached. Its peers refuse them as implausible; its own clients must
// not see them either: once the authority is gone, its successor produces
// the same ids from an honest clock, and one generation and id would carry
// two readings. The test steps the authority's clock, waits until it has
// produced ahead of real time, kills it, waits until the successor has
// produced past every id it did, and requires every tick either node's
// client saw to carry one reading per generation and id.
func TestSteppedAuthorityShowsNoTickAhead(t *testing.T) {
	const (
		period = 50 * time.Millisecond
		step   = 3 * time.Second
		bound  = 60 * time.Second
	)
	h := testcluster.New(t, testcluster.Options{Clocks: true})
	h.StartThree()
	allLive(h)
	log := &productionLog{}
	for _, m := range h.Live() {
		log.watch(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	d := startPaced(t, h.Leader(), "stepped", period)
	victim := h.Member(d.Authority.Node)
	var other *cluster.Member
	for _, m := range h.Live() {
		if m != victim {
			other = m
		}
	}
	local := attachOn(t, ctx, victim, d.Name, &wg)
	peer := attachOn(t, ctx, other, d.Name, &wg)
	h.Eventually(bound, "ticks through both nodes", func() bool {
		_, _, a := local.first(0, func(f wire.Frame) bool { return f.Kind == wire.FrameTick })
		_, _, b := peer.first(0, func(f wire.Frame) bool { return f.Kind == wire.FrameTick })
		return a && b
	})

	real := time.Now().UnixNano()
	h.Clock(victim.Node().Name()).Step(step)
	var ahead uint64 // the newest id the victim produced
	h.Eventually(bound, "the stepped authority producing ahead of real time", func() bool {
		for _, p := range log.all() {
			if p.node == victim.Node().Name() && p.authority > real+int64(step)/2 {
				ahead = max(ahead, p.id)
			}
		}
		return ahead != 0
	})
	h.Kill(victim.Node().Name())
	for _, p := range log.all() {
		if p.node == victim.Node().Name() && p.gen == d.Generation {
			ahead = max(ahead, p.id)
		}
	}
	h.Eventually(bound, "the successor producing past every id the stepped authority did", func() bool {
		_, _, ok := peer.first(0, func(f wire.Frame) bool {
			return f.Kind == wire.FrameTick && f.Tick.Generation == d.Generation && f.Tick.ID > ahead
		})
		return ok
	})

	readings := map[[2]uint64]int64{}
	var saw int
	for _, frames := range [][]wire.Frame{local.all(), peer.all()} {
		for _, f := range frames {
			if f.Kind != wire.FrameTick {
				continue
			}
			saw++
			key := [2]uint64{f.Tick.Generation, f.Tick.ID}
			if r, ok := readings[key]; ok {
				require.Equal(t, r, f.Tick.AuthorityUTC, "generation %d tick %d reached clients with two authority readings", key[0], key[1])
			}
			readings[key] = f.Tick.AuthorityUTC
		}
	}
	for _, f := range local.all() {
		if f.Kind == wire.FrameTick {
			require.Less(t, f.Tick.AuthorityUTC, real+int64(step)/2, "the stepped authority's own client saw tick %d produced ahead of real time", f.Tick.ID)
		}
	}
	t.Logf("%d ticks checked; the stepped authority produced up to id %d ahead of real time", saw, ahead)
}

// A stepped authority's clock that steps back (the time daemon corrects
// it) is confirmed by its peers once its projection passes the ids it
// produced ahead, and its own clients see its ticks again, with honest
// readings.
func TestSteppedAuthorityResumesOnceConfirmed(t *testing.T) {
	const (
		period = 50 * time.Millisecond
		step   = 2 * time.Second
		bound  = 60 * time.Second
	)
	h := testcluster.New(t, testcluster.Options{Clocks: true})
	h.StartThree()
	allLive(h)
	log := &productionLog{}
	for _, m := range h.Live() {
		log.watch(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	d := startPaced(t, h.Leader(), "corrected", period)
	victim := h.Member(d.Authority.Node)
	name := victim.Node().Name()
	local := attachOn(t, ctx, victim, d.Name, &wg)
	h.Eventually(bound, "a tick through the authority", func() bool {
		_, _, ok := local.first(0, func(f wire.Frame) bool { return f.Kind == wire.FrameTick })
		return ok
	})
	clock := h.Clock(name)
	real := time.Now().UnixNano()
	clock.Step(step)
	h.Eventually(bound, "the stepped authority producing ahead of real time", func() bool {
		for _, p := range log.all() {
			if p.node == name && p.authority > real+int64(step)/2 {
				return true
			}
		}
		return false
	})
	from := len(local.all())
	clock.Step(-step)
	corrected := time.Now().UnixNano()
	h.Eventually(bound, "the authority's own client seeing its ticks again", func() bool {
		_, _, ok := local.first(from, func(f wire.Frame) bool {
			return f.Kind == wire.FrameTick && f.Tick.AuthorityUTC >= corrected
		})
		return ok
	})
	for _, f := range local.all() {
		if f.Kind == wire.FrameTick {
			require.Less(t, f.Tick.AuthorityUTC, time.Now().UnixNano()+int64(step)/2, "tick %d with a reading ahead of real time", f.Tick.ID)
		}
	}
}
