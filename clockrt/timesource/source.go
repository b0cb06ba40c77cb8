package timesource

import "time"

// Source is a node's injected physical clock.
//
// Now reads UTC, which may step forwards or backwards when the host clock is
// adjusted. Monotonic and timers never step: a Timer armed for d fires once
// Monotonic has advanced by at least d, whatever UTC does meanwhile. Paired
// reads both at once, so that a reader can tell a step of UTC from time
// passing: between two paired readings, Wall minus Mono changes only when UTC
// was stepped, give or take PairTolerance.
//
// Implementations are safe for concurrent use.
type Source interface {
	// Now returns the current UTC instant as signed Unix nanoseconds.
	Now() int64
	// Monotonic returns the time elapsed on the source's monotonic clock
	// since an arbitrary, fixed origin of that source. Readings of one source
	// never decrease; readings of different sources are not comparable.
	Monotonic() time.Duration
	// Paired returns UTC and the monotonic reading taken together.
	Paired() Reading
	// PairTolerance bounds how far apart the two halves of one Paired
	// reading normally are: when UTC is not stepped, Wall minus Mono of any
	// two readings differs by at most this much. A reading may exceed it now
	// and then (a thread descheduled between the halves), so a reader that
	// sees a larger difference confirms it with another reading before it
	// takes it for a step. It is zero for a source whose halves are exact.
	PairTolerance() time.Duration
	// NewTimer arms a one-shot timer that fires after at least d of
	// monotonic time. A d of zero or less fires as soon as possible.
	NewTimer(d time.Duration) Timer
}

// Reading is one paired reading of a Source.
type Reading struct {
	// Wall is UTC as signed Unix nanoseconds, as Now returns it.
	Wall int64
	// Mono is the monotonic reading, as Monotonic returns it.
	Mono time.Duration
}

// Timer is a one-shot timer armed by a Source. It follows the Go 1.23
// time.Timer contract: after Stop or Reset returns, no value armed before
// the call is received from C.
//
// A Timer is used by one goroutine at a time, like time.Timer.
type Timer interface {
	// C returns the channel on which the timer delivers the firing instant.
	// It is the same channel for the timer's whole life.
	C() <-chan time.Time
	// Stop disarms the timer. It reports whether the call stopped a timer
	// that had not fired yet.
	Stop() bool
	// Reset re-arms the timer to fire after d, discarding any undelivered
	// firing. It reports whether the timer was armed before the call.
	Reset(d time.Duration) bool
}
