package timesource

import (
	"container/heap"
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Fake is a controllable Source for tests. Its clock moves only when the
// test calls Advance or Set, and Advance fires every timer that falls due,
// in deadline order (ties in arming order), on the calling goroutine before
// it returns. BlockUntil lets a test wait until the code under test has armed
// a number of timers, so no test sleeps to wait for time.
//
// A fired timer's value is buffered in its channel, so Advance never blocks
// on a slow receiver. Fake is safe for concurrent use.
type Fake struct {
	mu    sync.Mutex
	wall  int64
	mono  time.Duration
	seq   uint64
	fired uint64
	armed fakeHeap
	// unsettled counts the timers that have fired and whose owner has not
	// re-armed (Reset) or stopped them since: a goroutine woken by a firing
	// that has not yet come back to its timer (Virtual.Settled).
	unsettled int
	changed   chan struct{} // closed and replaced whenever the armed set changes
}

var _ Source = (*Fake)(nil)

// NewFake returns a Fake whose UTC reads wall (Unix nanoseconds) and whose
// monotonic clock reads zero.
func NewFake(wall int64) *Fake {
	return &Fake{wall: wall, changed: make(chan struct{})}
}

// Now returns the fake UTC instant.
func (f *Fake) Now() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wall
}

// Monotonic returns the fake monotonic reading.
func (f *Fake) Monotonic() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mono
}

// Paired returns the fake UTC instant and monotonic reading, both read
// under one lock.
func (f *Fake) Paired() Reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Reading{Wall: f.wall, Mono: f.mono}
}

// PairTolerance returns zero: the halves of a fake reading are exact, so a
// change of Wall minus Mono is always a step made by Set (or UTC saturating
// at the largest int64 while the monotonic clock moves on).
func (f *Fake) PairTolerance() time.Duration { return 0 }

// NewTimer arms a fake timer for d. A timer with d <= 0 fires at once.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), index: -1}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armLocked(t, d)
	return t
}

// Advance moves UTC and the monotonic clock forward by d and fires, in
// deadline order, every timer due at or before the new monotonic reading.
// Each timer's channel receives the UTC instant of its own deadline, but
// the code it wakes runs after Advance has returned and reads the new time
// from Now and Monotonic. A d of zero fires timers that are already due; a
// negative d is treated as zero because monotonic time never goes
// backwards. UTC saturates at the largest int64 and the monotonic reading
// at the largest Duration.
func (f *Fake) Advance(d time.Duration) {
	d = max(d, 0)
	f.mu.Lock()
	defer f.mu.Unlock()
	target := satAdd(f.mono, d)
	for len(f.armed) > 0 && f.armed[0].when <= target {
		t := heap.Pop(&f.armed).(*fakeTimer)
		f.moveLocked(t.when)
		f.fireLocked(t)
	}
	f.moveLocked(target)
	f.notifyLocked()
}

// Set steps UTC to wall without moving the monotonic clock, as a host clock
// adjustment does. It fires nothing: timers follow monotonic time.
func (f *Fake) Set(wall int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wall = wall
}

// Armed returns the number of timers armed and not yet fired or stopped.
func (f *Fake) Armed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.armed)
}

// Fired returns how many timer firings the fake has delivered so far.
func (f *Fake) Fired() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Next returns the monotonic time remaining until the earliest armed timer
// falls due, and false when no timer is armed.
func (f *Fake) Next() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.armed) == 0 {
		return 0, false
	}
	return f.armed[0].when - f.mono, true
}

// BlockUntil waits until at least n timers are armed, or ctx ends. It
// returns ctx's error in the latter case.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	return f.blockUntil(ctx, func() bool { return len(f.armed) >= n })
}

// blockUntil waits until cond, evaluated with f.mu held, holds, or ctx
// ends; it re-evaluates cond whenever the armed set changes.
func (f *Fake) blockUntil(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		if cond() {
			f.mu.Unlock()
			return nil
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Armings returns how many times a timer was armed (NewTimer or Reset),
// whether or not it has fired or been stopped since.
func (f *Fake) Armings() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// BlockUntilArmings waits until timers have been armed at least n times in
// all (see Armings) and at least one is armed, or ctx ends. A test whose
// code under test replaces a timer it armed (stops it and arms another)
// waits for the replacement with it: a count of armed timers cannot tell
// the old timer from the new one.
func (f *Fake) BlockUntilArmings(ctx context.Context, n uint64) error {
	return f.blockUntil(ctx, func() bool { return f.seq >= n && len(f.armed) > 0 })
}

// BlockUntilDue waits until a timer is armed that falls due exactly d after
// the current monotonic reading, or ctx ends. It returns ctx's error in the
// latter case. Where other code may arm timers of its own meanwhile (a
// retry timer, say), a count of armed timers cannot tell whose timer is
// armed; a test that knows when the code under test will next wake waits
// for that deadline instead.
func (f *Fake) BlockUntilDue(ctx context.Context, d time.Duration) error {
	return f.blockUntil(ctx, func() bool {
		when := satAdd(f.mono, max(d, 0))
		return slices.ContainsFunc(f.armed, func(t *fakeTimer) bool { return t.when == when })
	})
}

// moveLocked advances the monotonic clock to mono and UTC by the same amount.
func (f *Fake) moveLocked(mono time.Duration) {
	if mono <= f.mono {
		return
	}
	step := int64(mono - f.mono)
	f.mono = mono
	if f.wall > math.MaxInt64-step {
		f.wall = math.MaxInt64
	} else {
		f.wall += step
	}
}

func (f *Fake) armLocked(t *fakeTimer, d time.Duration) {
	f.seq++
	t.seq = f.seq
	t.when = satAdd(f.mono, max(d, 0))
	if t.when <= f.mono {
		f.fireLocked(t)
		return
	}
	heap.Push(&f.armed, t)
	f.notifyLocked()
}

// disarmLocked removes t from the armed set and discards an undelivered
// firing. It reports whether t was armed.
func (f *Fake) disarmLocked(t *fakeTimer) bool {
	if t.unsettled {
		t.unsettled = false
		f.unsettled--
	}
	armed := t.index >= 0
	if armed {
		heap.Remove(&f.armed, t.index)
		f.notifyLocked()
	}
	select {
	case <-t.c:
	default:
	}
	return armed
}

func (f *Fake) fireLocked(t *fakeTimer) {
	f.fired++
	if !t.unsettled {
		t.unsettled = true
		f.unsettled++
	}
	select {
	case t.c <- time.Unix(0, f.wall).UTC():
	default: // unreachable: arming drains the channel first
	}
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func satAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

type fakeTimer struct {
	f     *Fake
	c     chan time.Time
	when  time.Duration
	seq   uint64
	index int // position in Fake.armed, -1 when not armed
	// unsettled: the timer fired and has been neither reset nor stopped
	// since (Fake.unsettled).
	unsettled bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.disarmLocked(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	armed := t.f.disarmLocked(t)
	t.f.armLocked(t, d)
	return armed
}

// fakeHeap orders armed timers by deadline, then by arming order.
type fakeHeap []*fakeTimer

func (h fakeHeap) Len() int { return len(h) }
func (h fakeHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h fakeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *fakeHeap) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *fakeHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}
