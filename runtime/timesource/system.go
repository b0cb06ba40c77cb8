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
