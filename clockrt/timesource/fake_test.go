package timesource

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const base = int64(1_767_225_600_000_000_000) // 2026-01-01T00:00:00Z

// received reports the value waiting in c without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeAdvanceMovesBothClocks(t *testing.T) {
	tests := []struct {
		name     string
		start    int64
		steps    []time.Duration
		wantWall int64
		wantMono time.Duration
	}{
		{"zero", base, []time.Duration{0}, base, 0},
		{"one ns", base, []time.Duration{1}, base + 1, 1},
		{"negative is zero", base, []time.Duration{5, -3}, base + 5, 5},
		{"several", base, []time.Duration{time.Second, time.Millisecond}, base + int64(time.Second+time.Millisecond), time.Second + time.Millisecond},
		{"wall saturates", math.MaxInt64 - 1, []time.Duration{5}, math.MaxInt64, 5},
		{"mono saturates", 0, []time.Duration{math.MaxInt64, math.MaxInt64}, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFake(tt.start)
			for _, d := range tt.steps {
				f.Advance(d)
			}
			require.Equal(t, tt.wantWall, f.Now())
			require.Equal(t, tt.wantMono, f.Monotonic())
			require.Equal(t, Reading{Wall: tt.wantWall, Mono: tt.wantMono}, f.Paired())
		})
	}
}

func TestFakeSetStepsWallOnly(t *testing.T) {
	f := NewFake(base)
	tm := f.NewTimer(10)
	f.Set(base - int64(time.Hour))
	require.Equal(t, base-int64(time.Hour), f.Now())
	require.Equal(t, time.Duration(0), f.Monotonic())
	require.Equal(t, Reading{Wall: base - int64(time.Hour)}, f.Paired(), "a backward step keeps the monotonic half")
	require.Zero(t, f.PairTolerance())
	_, ok := received(tm.C())
	require.False(t, ok, "a UTC step must not fire a monotonic timer")
	f.Set(base + int64(time.Hour))
	_, ok = received(tm.C())
	require.False(t, ok)
	require.Equal(t, 1, f.Armed())
	f.Advance(10)
	v, ok := received(tm.C())
	require.True(t, ok)
	require.Equal(t, base+int64(time.Hour)+10, v.UnixNano())
}

func TestFakeTimerFiresAtDeadlineNotBefore(t *testing.T) {
	for _, d := range []time.Duration{1, 2, 999, time.Second, math.MaxInt64} {
		f := NewFake(base)
		tm := f.NewTimer(d)
		f.Advance(d - 1)
		_, ok := received(tm.C())
		require.False(t, ok, "fired 1ns early for %v", d)
		require.Equal(t, uint64(0), f.Fired())
		f.Advance(1)
		v, ok := received(tm.C())
		require.True(t, ok, "did not fire at %v", d)
		require.Equal(t, uint64(1), f.Fired())
		require.Equal(t, 0, f.Armed())
		require.Equal(t, time.Unix(0, f.Now()).UTC(), v)
	}
}

func TestFakeFiresInDeadlineOrderWithDeadlineInstants(t *testing.T) {
	f := NewFake(base)
	delays := []time.Duration{30, 10, 20, 10, 40}
	timers := make([]Timer, len(delays))
	for i, d := range delays {
		timers[i] = f.NewTimer(d)
	}
	next, ok := f.Next()
	require.True(t, ok)
	require.Equal(t, time.Duration(10), next)
	f.Advance(35)
	require.Equal(t, uint64(4), f.Fired())
	require.Equal(t, 1, f.Armed())
	for i, d := range delays[:4] {
		v, ok := received(timers[i].C())
		require.True(t, ok, "timer %d", i)
		require.Equal(t, base+int64(d), v.UnixNano(), "timer %d sees its own deadline", i)
	}
	_, ok = received(timers[4].C())
	require.False(t, ok)
	require.Equal(t, base+35, f.Now())
	next, ok = f.Next()
	require.True(t, ok)
	require.Equal(t, time.Duration(5), next)
}

func TestFakeStopAndReset(t *testing.T) {
	f := NewFake(base)
	tm := f.NewTimer(10)
	require.True(t, tm.Stop())
	require.False(t, tm.Stop())
	require.Equal(t, 0, f.Armed())
	f.Advance(20)
	_, ok := received(tm.C())
	require.False(t, ok, "stopped timer fired")

	require.False(t, tm.Reset(5), "reset of a stopped timer reports not armed")
	require.True(t, tm.Reset(5), "reset of an armed timer reports armed")
	f.Advance(5)
	require.False(t, tm.Stop(), "fired timer is no longer armed")
	_, ok = received(tm.C())
	require.False(t, ok, "stop discards an undelivered firing")

	require.False(t, tm.Reset(3))
	f.Advance(3)
	require.False(t, tm.Reset(7), "reset after firing reports not armed")
	_, ok = received(tm.C())
	require.False(t, ok, "reset discards an undelivered firing")
	f.Advance(6)
	_, ok = received(tm.C())
	require.False(t, ok)
	f.Advance(1)
	_, ok = received(tm.C())
	require.True(t, ok)
}

func TestFakeNonPositiveTimerFiresAtOnce(t *testing.T) {
	for _, d := range []time.Duration{0, -1, math.MinInt64} {
		f := NewFake(base)
		tm := f.NewTimer(d)
		v, ok := received(tm.C())
		require.True(t, ok, "d=%v", d)
		require.Equal(t, base, v.UnixNano())
		require.Equal(t, 0, f.Armed())
		_, ok = f.Next()
		require.False(t, ok)

		// It was never armed: stopping it reports so and leaves another
		// timer armed.
		other := f.NewTimer(time.Hour)
		again := f.NewTimer(d)
		require.False(t, again.Stop(), "d=%v", d)
		require.Equal(t, 1, f.Armed())
		next, ok := f.Next()
		require.True(t, ok)
		require.Equal(t, time.Hour, next)
		require.True(t, other.Stop())
	}
}

func TestFakeBlockUntil(t *testing.T) {
	f := NewFake(base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	done := make(chan time.Time)
	go func() {
		tm := f.NewTimer(time.Second)
		done <- <-tm.C()
	}()
	require.NoError(t, f.BlockUntil(ctx, 1))
	f.Advance(time.Second)
	require.Equal(t, base+int64(time.Second), (<-done).UnixNano())

	require.NoError(t, f.BlockUntil(ctx, 0))
	short, stop := context.WithCancel(ctx)
	stop()
	require.ErrorIs(t, f.BlockUntil(short, 1), context.Canceled)
}

func TestFakeBlockUntilDue(t *testing.T) {
	f := NewFake(base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	other := f.NewTimer(200 * time.Millisecond) // armed by someone else
	defer other.Stop()
	armed := make(chan struct{})
	done := make(chan time.Time)
	go func() {
		<-armed
		tm := f.NewTimer(time.Second)
		done <- <-tm.C()
	}()
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	require.ErrorIs(t, f.BlockUntilDue(short, time.Second), context.DeadlineExceeded,
		"another timer armed for a different deadline does not count")
	close(armed)
	require.NoError(t, f.BlockUntilDue(ctx, time.Second))
	f.Advance(time.Second)
	require.Equal(t, base+int64(time.Second), (<-done).UnixNano())

	// The deadline is relative to the clock's reading when it is asked.
	tm := f.NewTimer(3 * time.Second)
	defer tm.Stop()
	f.Advance(time.Second)
	require.NoError(t, f.BlockUntilDue(ctx, 2*time.Second))
}

func TestSystemSource(t *testing.T) {
	s := System()
	require.Same(t, s, System())
	m1 := s.Monotonic()
	m2 := s.Monotonic()
	require.GreaterOrEqual(t, m2, m1)
	require.Greater(t, s.Now(), base-int64(365*24*time.Hour), "system UTC is implausible")
	require.Equal(t, SystemPairTolerance, s.PairTolerance())

	// A paired reading's monotonic half lies between the readings taken
	// around it, and its wall half between the UTC readings around it
	// unless the host clock was stepped meanwhile.
	w1, m1 := s.Now(), s.Monotonic()
	r := s.Paired()
	m2, w2 := s.Monotonic(), s.Now()
	require.GreaterOrEqual(t, r.Mono, m1)
	require.LessOrEqual(t, r.Mono, m2)
	if w2 >= w1 {
		require.GreaterOrEqual(t, r.Wall, w1)
		require.LessOrEqual(t, r.Wall, w2)
	}

	tm := s.NewTimer(0)
	<-tm.C()
	require.False(t, tm.Stop())
	require.False(t, tm.Reset(time.Hour))
	require.True(t, tm.Stop())
}

func TestBlockUntilArmingsWaitsForTheReplacement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := NewFake(0)
	old := f.NewTimer(time.Second)
	require.Equal(t, uint64(1), f.Armings())
	replaced := make(chan error, 1)
	go func() { replaced <- f.BlockUntilArmings(ctx, 2) }()
	select {
	case err := <-replaced:
		t.Fatalf("returned (%v) while only the old timer was ever armed", err)
	default:
	}
	old.Stop()
	nt := f.NewTimer(time.Second)
	require.NoError(t, <-replaced)
	require.Equal(t, uint64(2), f.Armings())
	nt.Reset(time.Second)
	require.Equal(t, uint64(3), f.Armings(), "a reset arms again")
	nt.Stop()
}

// TestBlockUntilArmingsCondition reads the condition BlockUntilArmings
// waits for, with a context that has already ended: it returns at once
// when timers were armed at least n times in all and one is armed now, and
// the context's error otherwise.
func TestBlockUntilArmingsCondition(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		arm   func(f *Fake)
		n     uint64
		holds bool
	}{
		{"armed once, waiting for a second arming", func(f *Fake) { f.NewTimer(time.Second) }, 2, false},
		{"armed twice, the second still armed", func(f *Fake) { f.NewTimer(time.Second).Stop(); f.NewTimer(time.Second) }, 2, true},
		{"armed often enough, none armed now", func(f *Fake) { f.NewTimer(time.Second).Stop() }, 1, false},
		{"armed often enough, one armed", func(f *Fake) { f.NewTimer(time.Second) }, 1, true},
		{"nothing armed yet", func(*Fake) {}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(0)
			tc.arm(f)
			err := f.BlockUntilArmings(ended, tc.n)
			if tc.holds {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}
