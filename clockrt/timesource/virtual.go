package timesource

import (
	"container/heap"
	"time"
)

// DefaultVirtualStart is the instant a virtual clock starts at unless told
// otherwise: 2030-01-01T00:00:00Z, fixed so that runs repeat.
const DefaultVirtualStart int64 = 1893456000_000000000

// Virtual is a Source of virtual time, for runs whose output must repeat
// byte for byte: its clock stands still until its driver calls Step, which
// jumps UTC and the monotonic clock to the earliest armed timer's deadline
// and fires every timer due then. No wall time passes while virtual time
// does.
//
// The driver steps only once everything the previous firing woke has
// finished with it. Settled is the source's half of that: a firing is
// outstanding until the timer's owner resets or stops it, which a
// goroutine woken by its timer does before it waits again or returns, so
// while a firing is outstanding the goroutine it woke may still read the
// time it fired at. The rest of the engine's work (a tick on its way to a
// session) is the driver's to wait for (nspl.Engine).
//
// Virtual is safe for concurrent use.
type Virtual struct {
	f *Fake
}

var _ Source = (*Virtual)(nil)

// NewVirtual returns a virtual source whose UTC reads start (Unix
// nanoseconds) and whose monotonic clock reads zero.
func NewVirtual(start int64) *Virtual { return &Virtual{f: NewFake(start)} }

// Now returns the virtual UTC instant.
func (v *Virtual) Now() int64 { return v.f.Now() }

// Monotonic returns the virtual monotonic reading.
func (v *Virtual) Monotonic() time.Duration { return v.f.Monotonic() }

// Paired returns the virtual UTC instant and monotonic reading together.
func (v *Virtual) Paired() Reading { return v.f.Paired() }

// PairTolerance returns zero: a virtual reading is exact.
func (v *Virtual) PairTolerance() time.Duration { return 0 }

// NewTimer arms a timer that fires when Step reaches its deadline, d from
// now; a d of zero or less fires at once.
func (v *Virtual) NewTimer(d time.Duration) Timer { return v.f.NewTimer(d) }

// Settled reports whether every timer that has fired has since been reset
// or stopped by its owner.
func (v *Virtual) Settled() bool {
	v.f.mu.Lock()
	defer v.f.mu.Unlock()
	return v.f.unsettled == 0
}

// Armed returns the number of timers armed and not yet fired or stopped.
func (v *Virtual) Armed() int { return v.f.Armed() }

// Next returns the virtual time remaining until the earliest armed timer
// falls due, and false when none is armed.
func (v *Virtual) Next() (time.Duration, bool) { return v.f.Next() }

// Step moves virtual time to the earliest armed timer's deadline (not at
// all when it is due already) and fires every timer due then, in arming
// order. It reports false, changing nothing, when no timer is armed:
// nothing will ever happen unless something outside virtual time acts.
//
// Timers due at one instant fire together, so the order in which their
// owners armed them, which goroutines racing to arm decide, changes
// nothing: each reads the same instant.
func (v *Virtual) Step() bool {
	f := v.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.armed) == 0 {
		return false
	}
	when := f.armed[0].when
	f.moveLocked(when)
	for len(f.armed) > 0 && f.armed[0].when == when {
		f.fireLocked(heap.Pop(&f.armed).(*fakeTimer))
	}
	f.notifyLocked()
	return true
}
