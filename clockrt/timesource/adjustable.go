package timesource

import (
	"sync"
	"sync/atomic"
	"time"
)

// Adjustable wraps a Source with the two faults of a host's clock that a
// test rig injects into a node: a step of its UTC (Step), as an operator's
// date command or an NTP step makes, while the monotonic clock and the
// timers run on untouched; and a pause of its timers (Pause, Resume), the
// part of a SIGSTOP a process in the same address space can be given. A
// paused source fires no timer: a timer that falls due during the pause
// delivers its value on Resume, as a stopped process handles its expired
// timers once it is continued. UTC and the monotonic clock keep running
// through a pause, so the first reads after Resume see the whole pause
// elapsed, as a continued process does. What a pause cannot stop is code
// that does not take its time from the source (raft's own timers, the
// HTTP/2 stacks): a rig that pauses a node stalls its network links too.
//
// Adjustable is for test rigs and rehearsals; a node in production runs on
// System. It is safe for concurrent use. Each armed timer holds one
// goroutine until it fires and is delivered, or is stopped or reset.
type Adjustable struct {
	base   Source
	offset atomic.Int64 // added to the base's UTC

	mu      sync.Mutex
	paused  bool
	resumed chan struct{} // closed by Resume; replaced by Pause
	held    int           // timers that fell due during the pause
}

var _ Source = (*Adjustable)(nil)

// NewAdjustable returns a source that reads base, unstepped and running.
func NewAdjustable(base Source) *Adjustable {
	ch := make(chan struct{})
	close(ch)
	return &Adjustable{base: base, resumed: ch}
}

// Step moves UTC by d (forward for a positive d, back for a negative one)
// from now on, on top of earlier steps. The monotonic clock and the timers
// are not moved.
func (a *Adjustable) Step(d time.Duration) { a.offset.Add(int64(d)) }

// Offset returns the sum of the steps so far.
func (a *Adjustable) Offset() time.Duration { return time.Duration(a.offset.Load()) }

// Pause stops timers from firing until Resume. Pausing a paused source
// does nothing.
func (a *Adjustable) Pause() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.paused {
		a.paused = true
		a.resumed = make(chan struct{})
	}
}

// Resume lets timers fire again; each one that fell due during the pause
// delivers its value now. Resuming a running source does nothing.
func (a *Adjustable) Resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.paused {
		a.paused = false
		close(a.resumed)
	}
}

// HeldTimers returns how many timers fell due during the current pause
// and wait for Resume to deliver.
func (a *Adjustable) HeldTimers() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held
}

// Now returns the base's UTC plus the steps.
func (a *Adjustable) Now() int64 { return a.base.Now() + a.offset.Load() }

// Monotonic returns the base's monotonic reading: steps do not move it.
func (a *Adjustable) Monotonic() time.Duration { return a.base.Monotonic() }

// Paired returns the base's paired reading with the steps added to its
// UTC half.
func (a *Adjustable) Paired() Reading {
	r := a.base.Paired()
	r.Wall += a.offset.Load()
	return r
}

// PairTolerance returns the base's.
func (a *Adjustable) PairTolerance() time.Duration { return a.base.PairTolerance() }

// NewTimer arms a timer on the base whose firing is delivered once the
// source is not paused.
func (a *Adjustable) NewTimer(d time.Duration) Timer {
	t := &adjustableTimer{a: a, c: make(chan time.Time, 1)}
	t.mu.Lock()
	t.armLocked(d)
	t.mu.Unlock()
	return t
}

// waitRunning returns once the source is not paused, counting the wait
// as a held timer, or returns false when cancel closes first.
func (a *Adjustable) waitRunning(cancel <-chan struct{}) bool {
	a.mu.Lock()
	if !a.paused {
		a.mu.Unlock()
		return true
	}
	a.held++
	resumed := a.resumed
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.held--
		a.mu.Unlock()
	}()
	select {
	case <-resumed:
		return true
	case <-cancel:
		return false
	}
}

// adjustableTimer is one timer of an Adjustable. Each arming has a base
// timer and a forwarder goroutine that waits for it, waits out a pause and
// delivers; Stop and Reset end the arming's forwarder (cancel) and bump seq
// under mu, so a forwarder of an earlier arming never delivers after they
// return.
type adjustableTimer struct {
	a  *Adjustable
	c  chan time.Time
	mu sync.Mutex
	// seq numbers the armings; armed is whether the current one has yet
	// to deliver.
	seq    uint64
	armed  bool
	base   Timer
	cancel chan struct{}
}

func (t *adjustableTimer) armLocked(d time.Duration) {
	t.seq++
	t.armed = true
	t.base = t.a.base.NewTimer(d)
	t.cancel = make(chan struct{})
	go t.forward(t.seq, t.base, t.cancel) // owned by the timer: ends on delivery, Stop or Reset
}

func (t *adjustableTimer) forward(seq uint64, base Timer, cancel <-chan struct{}) {
	var v time.Time
	select {
	case v = <-base.C():
	case <-cancel:
		return
	}
	if !t.a.waitRunning(cancel) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seq != seq {
		return
	}
	t.armed = false
	select {
	case t.c <- v:
	default:
	}
}

func (t *adjustableTimer) C() <-chan time.Time { return t.c }

// Stop disarms the timer. A timer that fell due during a pause and was not
// delivered yet has not fired: Stop reports true for it.
func (t *adjustableTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopLocked()
}

func (t *adjustableTimer) stopLocked() bool {
	was := t.armed
	if was {
		t.base.Stop()
		close(t.cancel)
		t.armed = false
	}
	t.seq++
	select {
	case <-t.c:
	default:
	}
	return was
}

func (t *adjustableTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.stopLocked()
	t.armLocked(d)
	return was
}
