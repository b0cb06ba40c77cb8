package timesource

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAdjustableStepMovesUTCOnly(t *testing.T) {
	tests := []struct {
		name  string
		steps []time.Duration
		want  time.Duration
	}{
		{"none", nil, 0},
		{"forward", []time.Duration{5 * time.Second}, 5 * time.Second},
		{"back", []time.Duration{-3 * time.Second}, -3 * time.Second},
		{"forward then back past the start", []time.Duration{2 * time.Second, -7 * time.Second}, -5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(base)
			f.Advance(time.Minute)
			a := NewAdjustable(f)
			for _, d := range tc.steps {
				a.Step(d)
			}
			require.Equal(t, tc.want, a.Offset())
			require.Equal(t, f.Now()+int64(tc.want), a.Now())
			require.Equal(t, f.Monotonic(), a.Monotonic())
			require.Equal(t, Reading{Wall: f.Now() + int64(tc.want), Mono: f.Monotonic()}, a.Paired())
			require.Equal(t, f.PairTolerance(), a.PairTolerance())

			// A timer measures monotonic time, whatever the steps did.
			tm := a.NewTimer(time.Second)
			defer tm.Stop()
			f.Advance(time.Second - 1)
			a.Step(time.Hour)
			_, fired := received(tm.C())
			require.False(t, fired, "a step of UTC fired a timer")
			f.Advance(1)
			waitFired(t, tm)
		})
	}
}

// waitFired waits, under a bound, for the timer's value.
func waitFired(t *testing.T, tm Timer) {
	t.Helper()
	select {
	case <-tm.C():
	case <-time.After(10 * time.Second):
		t.Fatal("the timer did not deliver")
	}
}

// waitHeld waits, under a bound, until n timers of a are held by its pause.
func waitHeld(t *testing.T, a *Adjustable, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return a.HeldTimers() == n }, 10*time.Second, time.Millisecond,
		"%d timers held by the pause", n)
}

func TestAdjustablePauseHoldsTimersUntilResume(t *testing.T) {
	ctx := context.Background()
	f := NewFake(base)
	a := NewAdjustable(f)

	due := a.NewTimer(time.Second)
	later := a.NewTimer(time.Hour)
	defer later.Stop()
	a.Pause()
	a.Pause() // twice is once
	require.NoError(t, f.BlockUntil(ctx, 2))
	f.Advance(2 * time.Second)
	waitHeld(t, a, 1)
	_, fired := received(due.C())
	require.False(t, fired, "a timer fired while its source was paused")
	require.Equal(t, f.Monotonic(), a.Monotonic(), "the monotonic clock runs on through a pause")

	a.Resume()
	a.Resume() // twice is once
	waitFired(t, due)
	require.Zero(t, a.HeldTimers())
	_, fired = received(later.C())
	require.False(t, fired, "a timer not yet due fired on Resume")

	// Timers armed after Resume fire as usual.
	again := a.NewTimer(time.Millisecond)
	f.Advance(time.Millisecond)
	waitFired(t, again)
}

func TestAdjustableStopAndResetOfAHeldTimer(t *testing.T) {
	f := NewFake(base)
	a := NewAdjustable(f)

	stopped := a.NewTimer(time.Second)
	reset := a.NewTimer(time.Second)
	a.Pause()
	f.Advance(time.Second)
	waitHeld(t, a, 2)
	require.True(t, stopped.Stop(), "a timer held by the pause has not fired yet")
	require.False(t, stopped.Stop())
	require.True(t, reset.Reset(time.Second))
	waitHeld(t, a, 0) // the stopped and the reset armings' waits ended

	a.Resume()
	_, fired := received(stopped.C())
	require.False(t, fired, "a stopped timer delivered on Resume")
	_, fired = received(reset.C())
	require.False(t, fired, "a reset timer delivered its earlier arming on Resume")
	f.Advance(time.Second)
	waitFired(t, reset)
	require.False(t, reset.Stop(), "a delivered timer was still armed")
}
