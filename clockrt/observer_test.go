package clockrt

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
)

func observedPaced(gen uint64, rate float64) clock.Observed {
	lc := paced(gen, rate, 0)
	return clock.Observed{
		Generation: gen, State: clock.Paced, Period: lc.Period, Skew: lc.Skew,
		LogicalStart: lc.Mapping.LogicalStart, WallStartedAt: lc.Mapping.WallStartedAt, Rate: rate,
	}
}

func TestInstallationObserved(t *testing.T) {
	moved := paced(3, 2, 5)
	moved.Authority = fenceB
	cases := []struct {
		name string
		lc   Lifecycle
		want clock.Observed
	}{
		{name: "stopped never started", lc: stopped(0, 1), want: clock.Observed{State: clock.Stopped}},
		{name: "stopped", lc: stopped(4, 1), want: clock.Observed{Generation: 4, State: clock.Stopped}},
		{name: "uninstalled", lc: uninstalled(2, 1), want: clock.Observed{Generation: 2, State: clock.Uninstalled}},
		{name: "unpaced", lc: unpaced(2, 1), want: clock.Observed{Generation: 2, State: clock.Unpaced}},
		{name: "paced", lc: paced(3, 2, 1), want: observedPaced(3, 2)},
		{name: "paced, other authority", lc: moved, want: observedPaced(3, 2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			install(t, r, "d", tc.lc)
			got, ok := r.Current("d").Observed()
			require.True(t, ok)
			require.Equal(t, tc.want, got)
		})
	}
	_, ok := newInstallation("d", Lifecycle{}, nil).Observed()
	require.False(t, ok)
}

// woken reports whether the observer's wait returns without blocking.
func woken(o *Observer) bool {
	inst, prog := o.Notify()
	return closed(inst) || closed(prog)
}

func TestObserverWakes(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	o, err := r.Observe("d")
	require.NoError(t, err)
	require.Equal(t, "d", o.Domain())

	obs := o.Read()
	require.Equal(t, Observation{Clock: observedPaced(1, 1)}, obs)
	require.False(t, woken(o))

	// An equal installation from a later revision publishes nothing.
	install(t, r, "d", paced(1, 1, 2))
	require.False(t, woken(o))

	// Accepted progress wakes it; the read then carries the tick.
	_, err = r.AcceptProgress("a", report(1, 1, base))
	require.NoError(t, err)
	require.True(t, woken(o))
	require.NoError(t, o.Wait(context.Background()))
	obs = o.Read()
	require.Equal(t, report(1, 1, base).Tick(), obs.Tick)
	require.False(t, woken(o))

	// Ignored progress does not.
	_, err = r.AcceptProgress("a", report(1, 1, base))
	require.NoError(t, err)
	require.False(t, woken(o))

	// An authority move wakes it (newly published installation), but the
	// observed clock is equal and the tick is kept.
	moved := paced(1, 1, 3)
	moved.Authority = fenceB
	install(t, r, "d", moved)
	require.True(t, woken(o))
	again := o.Read()
	require.Equal(t, obs, again)

	// A new generation: new clock, the old tick is gone.
	install(t, r, "d", paced(2, 1, 4))
	require.True(t, woken(o))
	obs = o.Read()
	require.Equal(t, Observation{Clock: observedPaced(2, 1)}, obs)

	// STOP: stopped clock, no tick.
	install(t, r, "d", stopped(2, 5))
	require.True(t, woken(o))
	require.Equal(t, Observation{Clock: clock.Observed{Generation: 2, State: clock.Stopped}}, o.Read())

	// Removal: missing, and nothing after that ever wakes it.
	r.Remove("d")
	require.True(t, woken(o))
	require.Equal(t, Observation{Missing: true}, o.Read())
	install(t, r, "d", paced(3, 1, 6))
	require.False(t, woken(o), "a recreated domain is a new allocation")
	require.Equal(t, Observation{Missing: true}, o.Read())
}

func TestObserverTickOnlyWhilePacedOfItsGeneration(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	o, err := r.Observe("d")
	require.NoError(t, err)
	_, err = r.AcceptProgress("a", report(1, 4, base))
	require.NoError(t, err)
	require.Equal(t, uint64(4), o.Read().Tick.ID)

	// Revoked authority: the watch keeps the tick, the observer hides it.
	install(t, r, "d", uninstalled(1, 2))
	require.Equal(t, uint64(4), r.Progress("d").ID)
	require.Equal(t, Observation{Clock: clock.Observed{Generation: 1, State: clock.Uninstalled}}, o.Read())

	// Reassigned in the same generation: the retained tick shows again.
	install(t, r, "d", paced(1, 1, 3))
	require.Equal(t, uint64(4), o.Read().Tick.ID)
}

func TestObserverLateSubscriberSeesCurrentTick(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	_, err := r.AcceptProgress("a", report(1, 9, base))
	require.NoError(t, err)
	o, err := r.Observe("d")
	require.NoError(t, err)
	require.Equal(t, uint64(9), o.Read().Tick.ID)
}

func TestObserverWait(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	o, err := r.Observe("d")
	require.NoError(t, err)

	// Before any Read, Wait returns at once.
	require.NoError(t, o.Wait(context.Background()))
	o.Read()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, o.Wait(ctx), context.Canceled)

	done := make(chan error, 1)
	go func() { done <- o.Wait(context.Background()) }()
	_, err = r.AcceptProgress("a", report(1, 1, base))
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("progress did not wake the observer")
	}

	// An installation wakes it on its own: domain e has no accepted
	// progress, so stopping it leaves the progress watch untouched.
	install(t, r, "e", paced(1, 1, 3))
	oe, err := r.Observe("e")
	require.NoError(t, err)
	oe.Read()
	go func() { done <- oe.Wait(context.Background()) }()
	install(t, r, "e", stopped(1, 4))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("an installation did not wake the observer")
	}
}

func TestObserveMissing(t *testing.T) {
	r, _ := newAheadRegistry(t)
	_, err := r.Observe("nope")
	requireClockErr(t, err, ErrDomainMissing, "nope")
}

func TestObserverReading(t *testing.T) {
	r, f := newAheadRegistry(t)
	install(t, r, "d", paced(1, 2, 1))
	o, err := r.Observe("d")
	require.NoError(t, err)
	f.Advance(time.Second)
	snap, err := o.Reading(1)
	require.NoError(t, err)
	require.Equal(t, Snapshot{Generation: 1, Time: base - 10*second + 2*second}, snap)

	// The reading is the watermarked read: a UTC step back does not move it.
	f.Set(base)
	snap, err = o.Reading(1)
	require.NoError(t, err)
	require.Equal(t, base-8*second, snap.Time)
	h, err := r.Bind("d")
	require.NoError(t, err)
	now, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, snap.Time, now, "execution and the observer share the watermark")

	_, err = o.Reading(2)
	requireClockErr(t, err, ErrStaleGeneration, "d")
	install(t, r, "d", paced(2, 2, 2))
	_, err = o.Reading(1)
	requireClockErr(t, err, ErrStaleGeneration, "d")
	_, err = o.Reading(2)
	require.NoError(t, err)
	install(t, r, "d", stopped(2, 3))
	_, err = o.Reading(2)
	requireClockErr(t, err, ErrDomainStopped, "d")
}
