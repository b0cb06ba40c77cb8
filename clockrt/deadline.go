package clockrt

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// LogicalDeadline is a target instant in one domain generation's logical
// time. Only Handle.Deadline creates one, and only a handle of the same
// domain and generation waits for it.
//
// LogicalDeadline and PhysicalDeadline are distinct struct types with
// different fields, so Go allows no conversion between them; a test holds
// this with reflect.
type LogicalDeadline struct {
	domain     string
	generation uint64
	target     int64
}

// Domain returns the deadline's domain.
func (d LogicalDeadline) Domain() string { return d.domain }

// Generation returns the deadline's lifecycle generation.
func (d LogicalDeadline) Generation() uint64 { return d.generation }

// Target returns the target logical instant in signed Unix nanoseconds.
func (d LogicalDeadline) Target() int64 { return d.target }

// Deadline returns the logical deadline target in the handle's domain and
// generation.
func (h *Handle) Deadline(target int64) LogicalDeadline {
	return LogicalDeadline{domain: h.alloc.domain, generation: h.generation, target: target}
}

// WaitUntil waits until the domain's logical time reaches d and returns a
// fresh snapshot taken at that point.
//
// It loops: read and revalidate the bound clock; return the snapshot if the
// target is due; otherwise convert the remaining logical delta into a
// physical wait with the installed mapping's inverse (rounded up, so it never
// fires early; an unpaced clock waits the delta itself), arm a timer from the
// time source, and wake on the timer, the installation's replacement or ctx,
// then evaluate again. A wait longer than the largest time.Duration is armed
// for that largest Duration and re-evaluated when it fires.
//
// Outcomes other than success are *ClockError values: ErrWaitCancelled
// (also wrapping ctx's error) when ctx ends first; an unavailability
// (ErrDomainStopped, ErrStaleGeneration, ErrDomainMissing,
// ErrClockUninstalled, ErrForeignDeadline for a deadline of another domain
// or generation, all matching ErrClockUnavailable); ErrCannotSchedule when
// the physical wait does not fit unsigned 64-bit nanoseconds; ErrClockOverflow
// when the projection itself overflows.
func (h *Handle) WaitUntil(ctx context.Context, d LogicalDeadline) (Snapshot, error) {
	if d.domain != h.alloc.domain || d.generation != h.generation {
		return Snapshot{}, &ClockError{Op: "wait", Domain: h.alloc.domain, Generation: h.generation, Err: ErrForeignDeadline,
			Detail: foreignDetail(d)}
	}
	var timer timesource.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		in := h.alloc.cur.Load()
		snap, err := h.read(in, "wait")
		if err != nil {
			return Snapshot{}, err
		}
		if snap.Time >= d.target {
			return snap, nil
		}
		var wait uint64
		if in.lc.State == StatePaced {
			if wait, err = in.lc.Mapping.Wait(snap.Time, d.target); err != nil {
				return Snapshot{}, &ClockError{Op: "wait", Domain: h.alloc.domain, Generation: h.generation, Err: ErrCannotSchedule, Cause: err}
			}
		} else {
			wait = uint64(d.target) - uint64(snap.Time) // exact: target > snap.Time
		}
		dur := time.Duration(math.MaxInt64)
		if wait < math.MaxInt64 {
			dur = time.Duration(wait)
		}
		if timer == nil {
			timer = h.src.NewTimer(dur)
		} else {
			timer.Reset(dur)
		}
		select {
		case <-timer.C():
		case <-in.replaced:
		case <-ctx.Done():
			return Snapshot{}, &ClockError{Op: "wait", Domain: h.alloc.domain, Generation: h.generation, Err: ErrWaitCancelled, Cause: ctx.Err()}
		}
	}
}

func foreignDetail(d LogicalDeadline) string {
	if d.domain == "" {
		return "the deadline was not created by a clock handle"
	}
	return "deadline is for domain " + strconv.Quote(d.domain) + " generation " + strconv.FormatUint(d.generation, 10)
}

// PhysicalDeadline is a private monotonic instant of one time source. It is
// created by PhysicalClock.After and is unrelated to any domain's logical
// time: it never converts to or from a LogicalDeadline.
type PhysicalDeadline struct {
	clock *PhysicalClock
	at    time.Duration
}

// PhysicalClock is the capability to arm and wait for physical deadlines,
// such as request timeouts and retry backoffs, on one time source. A
// deadline is waited for only by the PhysicalClock that created it.
type PhysicalClock struct {
	src timesource.Source
}

// NewPhysicalClock returns a physical-deadline capability of src.
func NewPhysicalClock(src timesource.Source) *PhysicalClock { return &PhysicalClock{src: src} }

// After returns the deadline d from now on the monotonic clock. A negative d
// is due at once; a deadline past the largest Duration saturates there.
func (p *PhysicalClock) After(d time.Duration) PhysicalDeadline {
	now := p.src.Monotonic()
	at := now
	if d > 0 {
		at = now + d
		if at < now {
			at = math.MaxInt64
		}
	}
	return PhysicalDeadline{clock: p, at: at}
}

// Remaining returns the monotonic time left until d, zero when it is due.
func (p *PhysicalClock) Remaining(d PhysicalDeadline) time.Duration {
	return max(d.at-p.src.Monotonic(), 0)
}

// WaitUntil waits until d is due. It returns a *ClockError wrapping
// ErrWaitCancelled and ctx's error when ctx ends first, and one wrapping
// ErrForeignDeadline when another PhysicalClock (or none) created d.
func (p *PhysicalClock) WaitUntil(ctx context.Context, d PhysicalDeadline) error {
	if d.clock != p {
		return &ClockError{Op: "physical wait", Err: ErrForeignDeadline}
	}
	var timer timesource.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		rem := d.at - p.src.Monotonic()
		if rem <= 0 {
			return nil
		}
		if timer == nil {
			timer = p.src.NewTimer(rem)
		} else {
			timer.Reset(rem)
		}
		select {
		case <-timer.C():
		case <-ctx.Done():
			return &ClockError{Op: "physical wait", Err: ErrWaitCancelled, Cause: ctx.Err()}
		}
	}
}
