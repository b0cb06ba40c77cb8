package timesource

import (
	"time"
	_ "unsafe" // for go:linkname
)

// system is the process clock. Its monotonic origin is the runtime's
// monotonic reading when the package was initialised; that clock never steps
// with UTC.
type system struct {
	origin int64 // the runtime's monotonic reading at the origin
}

var systemSource = func() *system {
	_, _, mono := runtimeNow()
	return &system{origin: mono}
}()

// runtimeNow is the runtime's clock read behind time.Now: UTC as seconds and
// nanoseconds and the monotonic reading, taken together. Package time keeps
// it, with this signature, for packages that link to it (go.dev/issue/67401);
// Paired uses it so that a paired reading costs no more than time.Now, which
// builds a time.Time from the same three values. Like time.now itself, it
// reads the real clock inside a testing/synctest bubble; tests take a Fake
// instead.
//
//go:linkname runtimeNow time.now
func runtimeNow() (sec int64, nsec int32, mono int64)

// System returns the process clock: UTC and the monotonic clock from the
// runtime's clock behind time.Now, and timers from time.NewTimer. It is the
// only Source production code uses, and the only code in the module that
// reads the process clock for the runtime.
func System() Source { return systemSource }

// Now returns time.Now as Unix nanoseconds.
func (s *system) Now() int64 { return time.Now().UnixNano() }

// Monotonic returns the monotonic time elapsed since the source's origin.
func (s *system) Monotonic() time.Duration {
	_, _, mono := runtimeNow()
	return time.Duration(mono - s.origin)
}

// SystemPairTolerance is the system source's PairTolerance. The runtime's
// clock reads the wall clock and then the monotonic clock; the two reads are
// usually within about 10ns of each other, but a thread descheduled between
// them returns a pair whose wall half lags by as long as it waited (measured
// on a loaded 2-core host: beyond 200ns for about one reading in 10^4,
// beyond 15µs for one in 10^5, a millisecond or more for one in 10^7). 10µs
// is a thousand times the usual disagreement, so the slow path that confirms
// a suspected step is rare, and far below any step of the host clock worth
// following: NTP slews offsets under 128ms (which moves the monotonic clock
// alike) and steps only larger ones.
const SystemPairTolerance = 10 * time.Microsecond

// Paired returns one reading of the runtime's clock, as time.Now takes it:
// UTC as Unix nanoseconds and the monotonic time elapsed since the source's
// origin.
func (s *system) Paired() Reading {
	sec, nsec, mono := runtimeNow()
	return Reading{Wall: sec*1e9 + int64(nsec), Mono: time.Duration(mono - s.origin)}
}

// PairTolerance returns SystemPairTolerance.
func (s *system) PairTolerance() time.Duration { return SystemPairTolerance }

// NewTimer wraps time.NewTimer.
func (s *system) NewTimer(d time.Duration) Timer {
	return systemTimer{t: time.NewTimer(d)}
}

type systemTimer struct {
	t *time.Timer
}

func (t systemTimer) C() <-chan time.Time        { return t.t.C }
func (t systemTimer) Stop() bool                 { return t.t.Stop() }
func (t systemTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }
