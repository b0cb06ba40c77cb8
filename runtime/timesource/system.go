package timesource

import "time"

// system is the process clock. Its monotonic origin is the instant System
// first ran; time.Since uses the runtime's monotonic reading, so Monotonic
// never steps with UTC.
type system struct {
	origin time.Time
}

var systemSource = &system{origin: time.Now()}

// System returns the process clock: UTC from time.Now and timers from
// time.NewTimer. It is the only Source production code uses, and the only
// code in the module that reads the process clock for the runtime.
func System() Source { return systemSource }

// Now returns time.Now as Unix nanoseconds.
func (s *system) Now() int64 { return time.Now().UnixNano() }

// Monotonic returns the monotonic time elapsed since the source's origin.
func (s *system) Monotonic() time.Duration { return time.Since(s.origin) }

// SystemPairTolerance is the system source's PairTolerance. time.Now reads
// the wall clock and then the monotonic clock; the two reads are usually
// within about 10ns of each other, but a thread descheduled between them
// returns a pair whose wall half lags by as long as it waited (measured on a
// loaded 2-core host: beyond 200ns for about one reading in 10^4, beyond
// 15µs for one in 10^5, up to a millisecond or more for one in 10^7). 10µs
// is a thousand times the usual disagreement, so the slow path that
// confirms a suspected step is rare, and far below any step of the host
// clock worth following: NTP slews offsets under 128ms (which moves the
// monotonic clock alike) and steps only larger ones.
const SystemPairTolerance = 10 * time.Microsecond

// Paired returns one time.Now as Unix nanoseconds and the monotonic time
// elapsed since the source's origin.
func (s *system) Paired() Reading {
	t := time.Now()
	return Reading{Wall: t.UnixNano(), Mono: t.Sub(s.origin)}
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
