package clockrt

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testlog"
)

const origin = base - 10*second

func fenceWith(rate float64, period uint64) ProducerFence {
	return ProducerFence{
		Domain: "d", Generation: 1,
		Mapping: clock.Mapping{WallStartedAt: base, LogicalStart: origin, Rate: rate},
		Period:  period, Authority: fenceA,
	}
}

// producerRig runs one producer on a fake clock and collects its reports
// and everything it logs.
type producerRig struct {
	t    *testing.T
	f    *timesource.Fake
	p    *Producer
	reps chan ProgressReport
	logs *testlog.Buffer
	ctx  context.Context
}

func startRig(t *testing.T, f *timesource.Fake, fence ProducerFence) *producerRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	rig := &producerRig{t: t, f: f, reps: make(chan ProgressReport, 1024), logs: new(testlog.Buffer), ctx: ctx}
	rig.p = StartProducer(ProducerConfig{Fence: fence, Source: f, Emit: func(r ProgressReport) { rig.reps <- r },
		Logger: rig.logs.Logger(slog.LevelDebug)})
	t.Cleanup(rig.p.Stop)
	return rig
}

// settle waits until the producer has armed its next wake (it emits
// before arming, so every report of the last wake is in reps) and returns
// the armed wait.
func (r *producerRig) settle() time.Duration {
	r.t.Helper()
	require.NoError(r.t, r.f.BlockUntil(r.ctx, 1))
	next, ok := r.f.Next()
	require.True(r.t, ok)
	return next
}

// advance moves the clock by d and settles.
func (r *producerRig) advance(d time.Duration) time.Duration {
	r.t.Helper()
	r.f.Advance(d)
	return r.settle()
}

// drain returns the reports emitted so far.
func (r *producerRig) drain() []uint64 {
	var ids []uint64
	for {
		select {
		case rep := <-r.reps:
			ids = append(ids, rep.ID)
		default:
			return ids
		}
	}
}

func TestProducerEmitsTickOneAtOrigin(t *testing.T) {
	f := timesource.NewFake(base)
	rig := startRig(t, f, fenceWith(1, uint64(second)))
	require.Equal(t, time.Second, rig.settle())
	rep := <-rig.reps
	require.Equal(t, ProgressReport{
		Domain: "d", Generation: 1, Authority: fenceA,
		ID: 1, Boundary: origin, AuthorityUTC: base, Period: uint64(second),
	}, rep)
	require.Equal(t, uint64(1), rig.p.Emitted())
	require.Equal(t, uint64(1), rig.p.LastTick())

	// Just short of the boundary nothing is emitted; at it, tick 2.
	require.Equal(t, time.Nanosecond, rig.advance(time.Second-time.Nanosecond))
	require.Empty(t, rig.drain())
	require.Equal(t, time.Second, rig.advance(time.Nanosecond))
	rep = <-rig.reps
	require.Equal(t, uint64(2), rep.ID)
	require.Equal(t, origin+second, rep.Boundary)
	require.Equal(t, base+second, rep.AuthorityUTC)
}

func TestProducerBeforeAnchorEmitsOrigin(t *testing.T) {
	// A UTC observation before the anchor projects to the origin: tick 1.
	f := timesource.NewFake(base - 5*second)
	rig := startRig(t, f, fenceWith(1, uint64(second)))
	rig.settle()
	rep := <-rig.reps
	require.Equal(t, uint64(1), rep.ID)
	require.Equal(t, origin, rep.Boundary)
}

func TestProducerCoalescesAfterStall(t *testing.T) {
	f := timesource.NewFake(base)
	rig := startRig(t, f, fenceWith(1, uint64(second)))
	rig.settle()
	require.Equal(t, []uint64{1}, rig.drain())

	// A stall of 10.5 periods: one wake, only the newest due tick (11),
	// then at least one period of spacing.
	require.Equal(t, time.Second, rig.advance(10*time.Second+500*time.Millisecond))
	require.Equal(t, []uint64{11}, rig.drain())
	require.Equal(t, time.Second, rig.advance(time.Second))
	require.Equal(t, []uint64{12}, rig.drain())

	// A stall of thousands of periods costs one report.
	rig.advance(5000 * time.Second)
	require.Equal(t, []uint64{5012}, rig.drain())
}

func TestProducerLateStartSpacing(t *testing.T) {
	cases := []struct {
		name      string
		startAt   int64 // fake UTC when the producer starts
		rate      float64
		wantFirst uint64
		wantWait  time.Duration // armed after the first emission
	}{
		{name: "on time", startAt: base, rate: 1, wantFirst: 1, wantWait: time.Second},
		{name: "just before tick 2", startAt: base + second - 1, rate: 1, wantFirst: 1, wantWait: time.Second},
		{name: "at tick 2", startAt: base + second, rate: 1, wantFirst: 2, wantWait: time.Second},
		{name: "two and a half late", startAt: base + 5*second/2, rate: 1, wantFirst: 3, wantWait: time.Second},
		{name: "rate 60", startAt: base, rate: 60, wantFirst: 1, wantWait: 16666667},
		{name: "rate 60, late by one physical ns", startAt: base + 1, rate: 60, wantFirst: 1, wantWait: 16666667},
		{name: "rate 1000, period 1ms: the floor of one tick a millisecond", startAt: base, rate: 1000, wantFirst: 1, wantWait: time.Millisecond},
		{name: "rate 0.5", startAt: base, rate: 0.5, wantFirst: 1, wantWait: 2 * time.Second},
		{name: "rate 3, ceil", startAt: base, rate: 3, wantFirst: 1, wantWait: 333333334},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := timesource.NewFake(tc.startAt)
			period := uint64(second)
			if tc.rate == 1000 {
				period = uint64(time.Millisecond)
			}
			rig := startRig(t, f, fenceWith(tc.rate, period))
			require.Equal(t, tc.wantWait, rig.settle())
			require.Equal(t, []uint64{tc.wantFirst}, rig.drain())
		})
	}
}

func TestProducerSpacingProperty(t *testing.T) {
	// Whatever the advance pattern, consecutive emissions are at least
	// ceil(period/rate) of monotonic time apart and ids increase.
	for _, rate := range []float64{1, 3, 60, 1000, 0.25} {
		f := timesource.NewFake(base)
		fence := fenceWith(rate, uint64(10*time.Millisecond))
		spacing, err := fence.Mapping.WaitDelta(fence.Period)
		require.NoError(t, err)
		spacing = max(spacing, uint64(time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var monos []time.Duration
		var ids []uint64
		p := StartProducer(ProducerConfig{Fence: fence, Source: f, Emit: func(r ProgressReport) {
			monos = append(monos, f.Monotonic())
			ids = append(ids, r.ID)
		}})
		sp := time.Duration(spacing)
		steps := []time.Duration{1, 7, sp / 3, sp - 1, sp, 10 * sp, 1, 2, sp - sp/3 - 1}
		for i := range 300 {
			require.NoError(t, f.BlockUntil(ctx, 1))
			f.Advance(steps[i%len(steps)])
		}
		p.Stop()
		cancel()
		require.Greater(t, len(ids), 10)
		for i := 1; i < len(ids); i++ {
			require.Greater(t, ids[i], ids[i-1], "rate %v", rate)
			require.GreaterOrEqual(t, uint64(monos[i]-monos[i-1]), spacing, "rate %v emission %d", rate, i)
		}
	}
}

// TestProducerTickFloor holds the floor of MinTickInterval (1ms of
// monotonic time) between two ticks of one domain: a cadence finer than
// that, which the specification accepts (PERIOD 1ns at TIME RATE 1000), is
// paced, emitting at each wake only the newest due tick, while a cadence at
// or above it is untouched.
func TestProducerTickFloor(t *testing.T) {
	require.Equal(t, time.Millisecond, MinTickInterval)
	cases := []struct {
		name     string
		period   uint64
		rate     float64
		wantWait time.Duration // armed after the first emission
		wantNext uint64        // the tick emitted once wantWait has passed
	}{
		{name: "period 1ns at rate 1000", period: 1, rate: 1000, wantWait: time.Millisecond, wantNext: 1_000_000_001},
		{name: "period 1ns at rate 1", period: 1, rate: 1, wantWait: time.Millisecond, wantNext: 1_000_001},
		{name: "just finer than the floor", period: 999_999, rate: 1, wantWait: time.Millisecond, wantNext: 2},
		{name: "at the floor", period: 1_000_000, rate: 1, wantWait: time.Millisecond, wantNext: 2},
		{name: "at the floor through the rate", period: 1_000_000_000, rate: 1000, wantWait: time.Millisecond, wantNext: 2},
		{name: "just coarser than the floor", period: 1_000_001, rate: 1, wantWait: 1_000_001 * time.Nanosecond, wantNext: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := timesource.NewFake(base)
			rig := startRig(t, f, fenceWith(tc.rate, tc.period))
			require.Equal(t, tc.wantWait, rig.settle())
			require.Equal(t, []uint64{1}, rig.drain())
			// One nanosecond short of the spacing: nothing more.
			rig.advance(tc.wantWait - time.Nanosecond)
			require.Empty(t, rig.drain())
			rig.advance(time.Nanosecond)
			require.Equal(t, []uint64{tc.wantNext}, rig.drain())
		})
	}
}

func TestProducerUTCStepBack(t *testing.T) {
	f := timesource.NewFake(base)
	rig := startRig(t, f, fenceWith(1, uint64(second)))
	rig.settle()
	require.Equal(t, []uint64{1}, rig.drain())
	rig.advance(3 * time.Second)
	require.Equal(t, []uint64{4}, rig.drain())
	// The host clock steps back two seconds: no tick is due again.
	f.Set(base + second)
	rig.advance(time.Second)
	require.Empty(t, rig.drain())
	rig.advance(3 * time.Second)
	require.Equal(t, []uint64{6}, rig.drain(), "UTC is base+5s: tick 6 is the latest due")
}

// TestProducerUTCStepBackWithinTicks steps the host clock back after tick
// 4 was emitted at base+3s, so that the producer's next wake finds a tick
// it has already emitted (or an earlier one) due: it emits nothing, never
// the same tick twice, arms the wait to the next boundary, and emits tick 5
// when UTC reaches it.
func TestProducerUTCStepBackWithinTicks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		to    int64           // UTC after the step
		wake  time.Duration   // the advance that fires the producer's timer
		waits []time.Duration // the waits armed at each wake before tick 5
	}{
		{name: "back into the emitted tick", to: base + 2*second, wake: time.Second,
			waits: []time.Duration{time.Second}},
		{name: "back before it, woken late", to: base + second, wake: 1500 * time.Millisecond,
			waits: []time.Duration{500 * time.Millisecond, time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := timesource.NewFake(base)
			rig := startRig(t, f, fenceWith(1, uint64(second)))
			rig.settle()
			require.Equal(t, []uint64{1}, rig.drain())
			require.Equal(t, time.Second, rig.advance(3*time.Second))
			require.Equal(t, []uint64{4}, rig.drain())
			f.Set(tc.to)
			next := tc.wake
			for _, want := range tc.waits {
				require.Equal(t, want, rig.advance(next), "UTC %d", f.Now())
				require.Empty(t, rig.drain(), "UTC %d: no tick after 4 is due", f.Now())
				next = want
			}
			require.Equal(t, time.Second, rig.advance(next))
			require.Equal(t, []uint64{5}, rig.drain())
			require.Equal(t, base+4*second, f.Now(), "tick 5 is due at base+4s")
		})
	}
}

func TestProducerStop(t *testing.T) {
	f := timesource.NewFake(base)
	rig := startRig(t, f, fenceWith(1, uint64(second)))
	rig.settle()
	rig.p.Stop()
	select {
	case <-rig.p.Done():
	default:
		t.Fatal("Stop returned before the goroutine ended")
	}
	require.Zero(t, f.Armed(), "the timer is disarmed")
	rig.p.Stop() // idempotent
	require.True(t, rig.p.Parked(), "a stopped producer has nothing left to do")
	f.Advance(time.Hour)
	require.Equal(t, []uint64{1}, rig.drain(), "nothing after Stop")
	require.Equal(t, fenceWith(1, uint64(second)), rig.p.Fence())
	require.NoError(t, rig.p.Err())
}

// reports returns the reports emitted so far.
func (r *producerRig) reports() []ProgressReport {
	var reps []ProgressReport
	for {
		select {
		case rep := <-r.reps:
			reps = append(reps, rep)
		default:
			return reps
		}
	}
}

// stoppedProducing is the message of the producer's failure warning.
const stoppedProducing = "tick producer stopped producing"

// Each failure the spec names for the authority (projection, tick
// boundary, cadence, rate conversion) stops the producer with the full
// typed report, the same in its runtime event (the last report's Failure,
// after the ticks it emitted), in Err and in its one warning.
func TestProducerArithmeticLimits(t *testing.T) {
	failures := []struct {
		name     string
		start    int64 // the fake UTC the producer starts at; 0: base
		fence    func() ProducerFence
		advance  time.Duration // after the first settle; 0: the producer fails at once
		sentinel error
		op       string
		ticks    []uint64 // emitted before the failure
		phrases  []string // in the failure's report
	}{
		{
			name: "cadence: no later tick",
			fence: func() ProducerFence {
				f := fenceWith(1, 100)
				f.Mapping.LogicalStart = math.MaxInt64 - 10
				return f
			},
			sentinel: ErrTickOverflow, op: "next tick", ticks: []uint64{1},
			phrases: []string{`produce domain "d" generation 1`, "domain clock tick leaves the range", "clock: next tick"},
		},
		{
			name:     "projection overflow",
			fence:    func() ProducerFence { return fenceWith(1e300, uint64(second)) },
			advance:  MinTickInterval, // the next wake, one tick interval on
			sentinel: ErrClockOverflow, op: "project", ticks: []uint64{1},
			phrases: []string{`produce domain "d" generation 1`, "domain clock projection", "falls outside the signed Unix-nanosecond range", "clock: project"},
		},
		{
			name: "projection past the range at the first read",
			fence: func() ProducerFence {
				f := fenceWith(1, uint64(second))
				f.Mapping.LogicalStart = math.MaxInt64
				f.Mapping.WallStartedAt = base - 1
				return f
			},
			sentinel: ErrClockOverflow, op: "project",
			phrases: []string{"domain clock projection", "falls outside the signed Unix-nanosecond range"},
		},
		{
			// Period 1ns from the first signed nanosecond, read at the
			// last: the latest due tick's id would be 2^64.
			name:  "tick boundary: the latest due tick past the last id",
			start: math.MaxInt64,
			fence: func() ProducerFence {
				f := fenceWith(1, 1)
				f.Mapping.WallStartedAt, f.Mapping.LogicalStart = math.MinInt64, math.MinInt64
				return f
			},
			sentinel: ErrTickOverflow, op: "latest due tick",
			phrases: []string{`produce domain "d" generation 1`, "domain clock tick leaves the range", "clock: latest due tick", "unsigned 64-bit tick ids"},
		},
		{
			// One second at rate 1e-11 is 10^20 physical nanoseconds.
			name:     "rate conversion: the wait for the next tick",
			fence:    func() ProducerFence { return fenceWith(1e-11, uint64(second)) },
			sentinel: ErrCannotSchedule, op: "wait", ticks: []uint64{1},
			phrases: []string{`produce domain "d" generation 1`, "cannot be scheduled as a physical wait at this rate",
				"clock: wait: result of logical delta 1000000000ns / rate 1e-11 leaves unsigned 64-bit nanoseconds"},
		},
		{
			// 10^18ns after the anchor the clock is 9,999,999ns into its
			// first period: the rest of it, 990,000,001ns, is the wait
			// that cannot be converted.
			name:     "rate conversion: the wait for the rest of a period",
			start:    base + 1e18,
			fence:    func() ProducerFence { return fenceWith(1e-11, uint64(second)) },
			sentinel: ErrCannotSchedule, op: "wait", ticks: []uint64{1},
			phrases: []string{"clock: wait: result of logical delta 990000001ns / rate 1e-11 leaves unsigned 64-bit nanoseconds"},
		},
		{
			// 20ns before the next boundary its wait fits, but one period
			// of 2^63ns at rate 0.5 is 2^64 physical nanoseconds.
			name:  "rate conversion: the spacing of one period",
			start: math.MaxInt64 - 19,
			fence: func() ProducerFence {
				f := fenceWith(0.5, 1<<63)
				f.Mapping.WallStartedAt, f.Mapping.LogicalStart = math.MinInt64, -1<<62
				return f
			},
			sentinel: ErrCannotSchedule, op: "wait", ticks: []uint64{1},
			phrases: []string{"cannot be scheduled as a physical wait at this rate",
				"clock: wait: result of logical delta 9223372036854775808ns / rate 0.5 leaves unsigned 64-bit nanoseconds"},
		},
		{
			name:     "rate conversion at the smallest rate",
			fence:    func() ProducerFence { return fenceWith(math.SmallestNonzeroFloat64, uint64(second)) },
			sentinel: ErrCannotSchedule, op: "wait", ticks: []uint64{1},
			phrases: []string{"cannot be scheduled as a physical wait at this rate", "rate 5e-324"},
		},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			start := tt.start
			if start == 0 {
				start = base
			}
			f := timesource.NewFake(start)
			fence := tt.fence()
			rig := startRig(t, f, fence)
			if tt.advance > 0 {
				rig.settle()
				f.Advance(tt.advance)
			}
			select {
			case <-rig.p.Done():
			case <-rig.ctx.Done():
				t.Fatalf("the producer did not stop (armed %d timers, emitted %d reports)", f.Armed(), rig.p.Emitted())
			}
			err := rig.p.Err()
			requireClockErr(t, err, tt.sentinel, "d")
			require.ErrorIs(t, err, clock.ErrOverflow)
			require.Zero(t, f.Armed())
			require.True(t, rig.p.Parked(), "a failed producer has nothing left to do")

			reps := rig.reports()
			require.Len(t, reps, len(tt.ticks)+1, "the ticks and then one failure report")
			for i, id := range tt.ticks {
				require.Equal(t, id, reps[i].ID)
				require.Nil(t, reps[i].Failure)
			}
			last := reps[len(reps)-1]
			require.NotNil(t, last.Failure)
			require.Equal(t, fence.Authority, last.Authority)
			require.Equal(t, fence.Generation, last.Generation)
			if len(tt.ticks) > 0 {
				prev := reps[len(reps)-2]
				prev.Failure = last.Failure
				require.Equal(t, prev, last, "the failure report repeats the newest tick")
			} else {
				require.Zero(t, last.ID)
			}
			fl := last.Failure
			require.Equal(t, "d", fl.Domain)
			require.Equal(t, fence.Generation, fl.Generation)
			require.Equal(t, tt.op, fl.Op)
			require.Equal(t, err.Error(), fl.Message, "the full typed report, as the warning logs it")
			require.Equal(t, clockCause(t, err).Error(), fl.Cause)
			require.Contains(t, fl.Message, fl.Cause, "the arithmetic cause beneath the clock operation")
			require.ErrorIs(t, fl, tt.sentinel, "the failure unwraps to its sentinel through its code")
			for _, ph := range tt.phrases {
				require.Contains(t, fl.Message, ph)
			}
			require.Equal(t, uint64(len(tt.ticks)), rig.p.Emitted(), "the failure report is not a tick")

			// The one warning names the operation and renders the same
			// full typed report as its error.
			warnings := rig.logs.Records(t, stoppedProducing)
			require.Len(t, warnings, 1)
			w := warnings[0]
			require.Equal(t, "WARN", w.Get(slog.LevelKey))
			require.Equal(t, tt.op, w.Get("op"))
			require.Equal(t, fl.Message, w.Get("err"))
			require.Equal(t, "d", w.Get("domain"))
			require.Equal(t, "1", w.Get("generation"))
			require.Equal(t, fence.Authority.String(), w.Get("authority"))
		})
	}
	t.Run("wait beyond a duration", func(t *testing.T) {
		// One second at rate 1e-10 is about 10^19 physical nanoseconds:
		// it fits unsigned 64-bit nanoseconds, not a time.Duration, so it
		// saturates and is no failure.
		f := timesource.NewFake(base)
		fence := fenceWith(1e-10, uint64(second))
		rig := startRig(t, f, fence)
		require.Equal(t, time.Duration(math.MaxInt64), rig.settle())
		require.Equal(t, []uint64{1}, rig.drain())
		require.NoError(t, rig.p.Err())
		require.Empty(t, rig.logs.Records(t, stoppedProducing))
	})
}

// clockCause returns the cause a *ClockError wraps.
func clockCause(t *testing.T, err error) error {
	t.Helper()
	var ce *ClockError
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.Cause)
	return ce.Cause
}
