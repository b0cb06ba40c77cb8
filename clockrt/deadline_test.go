package clockrt

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

type waitResult struct {
	snap Snapshot
	err  error
}

// startWait runs h.WaitUntil on its own goroutine. The returned channel
// delivers its one result; tests always receive it, so the goroutine ends.
func startWait(ctx context.Context, h *Handle, d LogicalDeadline) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		snap, err := h.WaitUntil(ctx, d)
		out <- waitResult{snap, err}
	}()
	return out
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// refWait is ceil(delta / rate) of the exact real quotient, from math/big,
// saturated at math.MaxUint64.
func refWait(rate float64, delta int64) uint64 {
	q := new(big.Rat).Quo(new(big.Rat).SetInt64(delta), new(big.Rat).SetFloat64(rate))
	n, rem := new(big.Int).QuoRem(q.Num(), q.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsUint64() {
		return math.MaxUint64
	}
	return n.Uint64()
}

func TestDeadlineTypesDoNotConvert(t *testing.T) {
	l := reflect.TypeFor[LogicalDeadline]()
	p := reflect.TypeFor[PhysicalDeadline]()
	require.False(t, l.ConvertibleTo(p), "a logical deadline must not convert to a physical one")
	require.False(t, p.ConvertibleTo(l), "a physical deadline must not convert to a logical one")
	for _, typ := range []reflect.Type{l, p} {
		for i := range typ.NumField() {
			require.False(t, typ.Field(i).IsExported(), "%s.%s must stay unexported", typ.Name(), typ.Field(i).Name)
		}
	}
}

func TestDeadlineAccessors(t *testing.T) {
	r, _ := newFakeRegistry(t)
	install(t, r, "d", paced(3, 60, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	dl := h.Deadline(42)
	require.Equal(t, "d", dl.Domain())
	require.Equal(t, uint64(3), dl.Generation())
	require.Equal(t, int64(42), dl.Target())
}

// TestWaitFiresAtCeiledPhysicalWait: the waiter's timer is armed for
// exactly ceil(delta / rate) and the waiter returns when the fake clock
// reaches it, not one nanosecond before. Rows that start at the anchor have
// no fractional logical nanosecond pending, so there the ceiled wait is also
// the first instant at which the target is due.
func TestWaitFiresAtCeiledPhysicalWait(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		advance time.Duration // physical time after the anchor when waiting starts
		delta   int64         // logical ns ahead of the current reading
	}{
		{"rate 1", 1, 0, 1000},
		{"rate 1 later", 1, 5 * time.Second, 1000},
		{"rate 60", 60, 0, 61},
		{"rate 60 exact", 60, 0, 120},
		{"rate 60 later", 60, 5 * time.Second, 61},
		{"third", 1.0 / 3, 0, 1},
		{"third many", 1.0 / 3, 0, 1_000_000_007},
		{"third later", 1.0 / 3, 5 * time.Second, 2},
		{"tenth", 0.1, 0, 7},
		{"tenth later", 0.1, 3, 7},
		{"rate 1.5", 1.5, 0, 5},
		{"rate 2.5 one ns", 2.5, 0, 1},
		{"tiny rate", 1e-9, 0, 3},
		{"huge rate", 1e12, 0, 1_000_000_000_001},
		{"subnormal-adjacent rate", 0x1p-60, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, f := newFakeRegistry(t)
			install(t, r, "d", paced(1, tt.rate, 0))
			h, err := r.Bind("d")
			require.NoError(t, err)
			f.Advance(tt.advance)
			now, err := h.Now()
			require.NoError(t, err)
			target := now + tt.delta
			want := refWait(tt.rate, tt.delta)
			require.GreaterOrEqual(t, want, uint64(1))

			ctx := testContext(t)
			done := startWait(ctx, h, h.Deadline(target))
			require.NoError(t, f.BlockUntil(ctx, 1))
			next, ok := f.Next()
			require.True(t, ok)
			require.Equal(t, time.Duration(want), next, "armed wait is the ceiled inverse")

			f.Advance(time.Duration(want) - 1)
			require.Zero(t, f.Fired(), "timer fired before the ceiled wait")
			if tt.advance == 0 {
				early, err := h.Now()
				require.NoError(t, err)
				require.Less(t, early, target, "one ns before the wait the target is not due")
			}
			select {
			case res := <-done:
				t.Fatalf("waiter returned early: %+v", res)
			default:
			}

			f.Advance(1)
			res := <-done
			require.NoError(t, res.err)
			require.Equal(t, uint64(1), res.snap.Generation)
			require.GreaterOrEqual(t, res.snap.Time, target)
			require.Equal(t, uint64(1), f.Fired(), "the first wake found the target due")
			require.Zero(t, f.Armed(), "the waiter stops its timer")
		})
	}
}

func TestWaitUnpacedComparesUTC(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "u", unpaced(1, 0))
	h, err := r.Bind("u")
	require.NoError(t, err)
	ctx := testContext(t)
	done := startWait(ctx, h, h.Deadline(base+500))
	require.NoError(t, f.BlockUntil(ctx, 1))
	next, _ := f.Next()
	require.Equal(t, time.Duration(500), next)
	f.Advance(499)
	require.Zero(t, f.Fired())
	f.Advance(1)
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, Snapshot{Generation: 1, Time: base + 500}, res.snap)
}

func TestWaitAlreadyDue(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 60, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	f.Advance(10)
	now, err := h.Now()
	require.NoError(t, err)
	for _, target := range []int64{math.MinInt64, now - 1, now} {
		snap, err := h.WaitUntil(context.Background(), h.Deadline(target))
		require.NoError(t, err)
		require.Equal(t, Snapshot{Generation: 1, Time: now}, snap)
	}
	require.Zero(t, f.Armed())
	require.Zero(t, f.Fired())

	// A due deadline returns its snapshot even under a cancelled context:
	// the predicate is evaluated first.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.WaitUntil(ctx, h.Deadline(now))
	require.NoError(t, err)
}

// TestWaitReevaluatesAfterUTCStepBack: the due predicate stays logical.
// A timer that fires after UTC stepped back finds the target not due and
// arms again. A read observes the step before the timer fires: a step is
// taken into account when a read first sees it, and a read that saw it only
// when the timer fired could not tell that no read of the old frame had
// returned up to then, so it would hold the clock at the old frame's
// projection (see Handle.Snapshot).
func TestWaitReevaluatesAfterUTCStepBack(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	ctx := testContext(t)
	now, err := h.Now()
	require.NoError(t, err)
	done := startWait(ctx, h, h.Deadline(now+100))
	require.NoError(t, f.BlockUntil(ctx, 1))
	f.Set(base - 50) // the projection is now below the watermark
	held, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, now, held, "the read holds at the watermark")
	f.Advance(100) // the armed timer fires; UTC reads base+50
	require.NoError(t, f.BlockUntil(ctx, 1))
	require.Equal(t, uint64(1), f.Fired())
	next, _ := f.Next()
	require.Equal(t, time.Duration(50), next, "re-armed for the logical delta still missing")
	f.Advance(49)
	require.Equal(t, uint64(1), f.Fired())
	f.Advance(1)
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, now+100, res.snap.Time)
}

// TestWaitWakesOnLifecycle: a waiter wakes on every publication and reports
// STOP, a new generation, removal and loss of the installation as typed
// unavailability; an authority move keeps it waiting.
func TestWaitWakesOnLifecycle(t *testing.T) {
	tests := []struct {
		name string
		to   *Lifecycle // nil removes the domain
		err  error
	}{
		{"stop", lcp(stopped(1, 0)), ErrDomainStopped},
		{"new generation", lcp(paced(2, 60, 0)), ErrStaleGeneration},
		{"removed", nil, ErrDomainMissing},
		{"uninstalled", lcp(uninstalled(1, 0)), ErrClockUninstalled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, f := newFakeRegistry(t)
			install(t, r, "d", paced(1, 60, 0))
			h, err := r.Bind("d")
			require.NoError(t, err)
			ctx := testContext(t)
			done := startWait(ctx, h, h.Deadline(base+int64(time.Hour)))
			require.NoError(t, f.BlockUntil(ctx, 1))
			if tt.to == nil {
				r.Remove("d")
			} else {
				install(t, r, "d", *tt.to)
			}
			res := <-done
			ce := requireClockErr(t, res.err, tt.err, "d")
			require.Equal(t, "wait", ce.Op)
			require.ErrorIs(t, res.err, ErrClockUnavailable)
			require.NotErrorIs(t, res.err, ErrWaitCancelled)
			require.Zero(t, res.snap)
			require.Zero(t, f.Fired())
			require.Zero(t, f.Armed(), "the waiter stops its timer")
		})
	}
}

func TestWaitSurvivesAuthorityMove(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 2, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	ctx := testContext(t)
	now, err := h.Now()
	require.NoError(t, err)
	done := startWait(ctx, h, h.Deadline(now+10))
	require.NoError(t, f.BlockUntil(ctx, 1))
	in, replaced := h.Allocation().Watch()
	armings := f.Armings()
	moved := paced(1, 2, 0)
	moved.Authority = fenceB
	install(t, r, "d", moved)
	require.True(t, closed(replaced))
	// The waiter re-arms against the replacement; wait until it has armed
	// its new timer, not merely while the old one is still armed (advancing
	// then would let it arm the new one after the advance, for the full
	// remaining wait, and never fire).
	require.NoError(t, f.BlockUntilArmings(ctx, armings+1))
	require.NotSame(t, in, h.Allocation().Load())
	f.Advance(5)
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, now+10, res.snap.Time)
}

func TestWaitCancelled(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 60, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(testContext(t))
	done := startWait(ctx, h, h.Deadline(base))
	require.NoError(t, f.BlockUntil(ctx, 1))
	cancel()
	res := <-done
	requireClockErr(t, res.err, ErrWaitCancelled, "d")
	require.ErrorIs(t, res.err, context.Canceled)
	require.NotErrorIs(t, res.err, ErrClockUnavailable)
	require.Zero(t, f.Armed())

	ctx, cancel = context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	_, err = h.WaitUntil(ctx, h.Deadline(base))
	require.ErrorIs(t, err, ErrWaitCancelled)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestWaitForeignDeadline(t *testing.T) {
	r, _ := newFakeRegistry(t)
	install(t, r, "d", paced(2, 60, 0))
	install(t, r, "e", paced(2, 60, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	other, err := r.Bind("e")
	require.NoError(t, err)
	install(t, r, "e", paced(3, 60, 0))
	newer, err := r.Bind("e")
	require.NoError(t, err)
	install(t, r, "d", paced(3, 60, 0))
	h3, err := r.Bind("d")
	require.NoError(t, err)

	tests := []struct {
		name   string
		h      *Handle
		d      LogicalDeadline
		detail string
	}{
		{"other domain", h3, newer.Deadline(base), `domain "e" generation 3`},
		{"earlier generation", h3, LogicalDeadline{domain: "d", generation: 2, target: base}, `domain "d" generation 2`},
		{"zero value", h3, LogicalDeadline{}, "not created by a clock handle"},
		{"stale handle own deadline", h, h.Deadline(base), ""},
		{"stale other", other, h3.Deadline(base), `domain "d" generation 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.h.WaitUntil(context.Background(), tt.d)
			require.ErrorIs(t, err, ErrClockUnavailable)
			if tt.detail == "" {
				require.ErrorIs(t, err, ErrStaleGeneration)
				return
			}
			require.ErrorIs(t, err, ErrForeignDeadline)
			require.Contains(t, err.Error(), tt.detail)
		})
	}
}

func TestWaitCannotSchedule(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 5e-324, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	now, err := h.Now()
	require.NoError(t, err)
	_, err = h.WaitUntil(context.Background(), h.Deadline(now+1))
	requireClockErr(t, err, ErrCannotSchedule, "d")
	require.NotErrorIs(t, err, ErrClockUnavailable)
	require.Zero(t, f.Armed())
}

// TestWaitLongerThanDuration: a wait that fits unsigned 64-bit nanoseconds
// but not time.Duration is armed for the largest Duration and evaluated
// again when that timer fires.
func TestWaitLongerThanDuration(t *testing.T) {
	f := timesource.NewFake(math.MinInt64)
	r := NewRegistry(f)
	lc := paced(1, 1, 0)
	lc.Mapping = clock.Mapping{WallStartedAt: math.MinInt64, LogicalStart: math.MinInt64, Rate: 1}
	install(t, r, "d", lc)
	h, err := r.Bind("d")
	require.NoError(t, err)
	ctx := testContext(t)
	done := startWait(ctx, h, h.Deadline(0)) // 2^63 ns ahead
	require.NoError(t, f.BlockUntil(ctx, 1))
	next, _ := f.Next()
	require.Equal(t, time.Duration(math.MaxInt64), next)
	f.Set(math.MinInt64 + 1) // the one missing nanosecond arrives as a UTC step
	f.Advance(math.MaxInt64 - 1)
	require.Zero(t, f.Fired())
	f.Advance(1)
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, int64(0), res.snap.Time)
	require.Equal(t, uint64(1), f.Fired())
}

func TestPhysicalDeadline(t *testing.T) {
	f := timesource.NewFake(base)
	r := NewRegistry(f)
	p := r.Physical()
	require.Same(t, p, r.Physical())
	ctx := testContext(t)

	dl := p.After(100 * time.Millisecond)
	require.Equal(t, 100*time.Millisecond, p.Remaining(dl))
	f.Set(base + int64(time.Hour)) // a UTC step changes nothing physical
	require.Equal(t, 100*time.Millisecond, p.Remaining(dl))
	done := make(chan error, 1)
	go func() { done <- p.WaitUntil(ctx, dl) }()
	require.NoError(t, f.BlockUntil(ctx, 1))
	f.Advance(100*time.Millisecond - 1)
	require.Zero(t, f.Fired())
	f.Advance(1)
	require.NoError(t, <-done)
	require.Zero(t, p.Remaining(dl))

	require.NoError(t, p.WaitUntil(ctx, p.After(-time.Second)), "a past deadline is due at once")
	require.NoError(t, p.WaitUntil(ctx, p.After(0)))
	far := p.After(math.MaxInt64)
	require.Equal(t, time.Duration(math.MaxInt64)-f.Monotonic(), p.Remaining(far), "saturates")

	err := NewPhysicalClock(f).WaitUntil(ctx, p.After(time.Second))
	require.ErrorIs(t, err, ErrForeignDeadline)
	require.ErrorIs(t, p.WaitUntil(ctx, PhysicalDeadline{}), ErrForeignDeadline)

	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- p.WaitUntil(cctx, p.After(time.Second)) }()
	require.NoError(t, f.BlockUntil(ctx, 1))
	cancel()
	err = <-done
	require.ErrorIs(t, err, ErrWaitCancelled)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, f.Armed())
}

// TestWaitPropertyAgainstBig draws rates across the float64 range and
// logical deltas, and checks that the waiter arms exactly the math/big
// ceiling of delta / rate from the anchor and returns at that instant.
func TestWaitPropertyAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	waited, refused := 0, 0
	defer func() {
		require.Greater(t, waited, 100, "too few cases waited")
		require.Greater(t, refused, 10, "too few cases could not be scheduled")
	}()
	for i := range 300 {
		rate := math.Ldexp(1+rng.Float64(), rng.IntN(90)-60) // about 2^-60 .. 2^30
		delta := 1 + rng.Int64N(1<<40)
		want := refWait(rate, delta)
		r, f := newFakeRegistry(t)
		lc := paced(1, rate, 0)
		lc.Mapping.LogicalStart = 0
		install(t, r, "d", lc)
		h, err := r.Bind("d")
		require.NoError(t, err)
		ctx := testContext(t)
		if want == math.MaxUint64 {
			_, err := h.WaitUntil(ctx, h.Deadline(delta))
			require.ErrorIs(t, err, ErrCannotSchedule, "case %d rate %v delta %d", i, rate, delta)
			refused++
			continue
		}
		if want > uint64(math.MaxInt64-base) {
			continue // the fake's UTC would saturate first; TestWaitLongerThanDuration covers long waits
		}
		done := startWait(ctx, h, h.Deadline(delta))
		if err := f.BlockUntil(ctx, 1); err != nil {
			t.Fatalf("case %d rate %v delta %d: %v, waiter: %+v", i, rate, delta, err, <-done)
		}
		next, _ := f.Next()
		require.Equal(t, time.Duration(want), next, "case %d rate %v delta %d", i, rate, delta)
		f.Advance(next - 1)
		require.Zero(t, f.Fired())
		f.Advance(1)
		res := <-done
		require.NoError(t, res.err)
		require.GreaterOrEqual(t, res.snap.Time, delta)
		require.Equal(t, uint64(1), f.Fired(), "case %d rate %v delta %d", i, rate, delta)
		waited++
	}
}
