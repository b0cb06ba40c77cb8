package clockrt

import (
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Snapshot is an execution-time snapshot: the validated lifecycle generation
// and one clock reading, taken once when a unit of domain work is accepted
// and shared by everything that unit evaluates.
type Snapshot struct {
	// Generation is the generation the reading was validated against.
	Generation uint64
	// Time is the domain's logical time in signed Unix nanoseconds.
	Time int64
}

// Handle is a clock capability bound to one domain and one lifecycle
// generation. It is created only by Bind and is safe for concurrent use.
//
// Every read revalidates the shared installation: a handle of a replaced
// generation fails with ErrStaleGeneration, a stopped domain with
// ErrDomainStopped, a removed one with ErrDomainMissing. No failure falls
// back to wall time.
type Handle struct {
	alloc      *Allocation
	src        timesource.Source
	generation uint64
}

// Domain returns the bound domain's name.
func (h *Handle) Domain() string { return h.alloc.domain }

// Generation returns the bound lifecycle generation.
func (h *Handle) Generation() uint64 { return h.generation }

// Allocation returns the domain's shared lifecycle allocation.
func (h *Handle) Allocation() *Allocation { return h.alloc }

// Now reads the domain clock. See Snapshot.
func (h *Handle) Now() (int64, error) {
	// read, written out: a read that completes on the fast path makes one
	// call fewer.
	in := h.alloc.cur.Load()
	if in.lc.Generation == h.generation && in.lc.State.Readable() {
		if t, ok := in.clock.readFast(h.src); ok {
			return t, nil
		}
	}
	s, err := h.readSlow(in, "read")
	return s.Time, err
}

// Snapshot reads the domain clock once: it loads the published installation,
// validates the handle's generation and the state, takes one paired reading
// of the time source and projects the reading's UTC through the paced
// mapping (an unpaced clock reads that UTC itself).
//
// A reading's UTC is the time source's paired reading seen through the
// generation's frame: the wall at the frame's calibration plus the
// monotonic time elapsed since. While the wall agrees with it to within the
// source's pair tolerance, the read stores nothing. A wall that has stepped
// forward re-bases the frame forward; one that has stepped backward lowers
// the frame only after raising the generation's watermark to the bound of
// every value a read could have returned, and reads return at least the
// watermark until the lowered projection passes it. Reads of one generation
// on one node therefore never decrease, even across a UTC step backwards or
// a racing replacement of the same generation, and never claim a logical
// nanosecond beyond the projection of some reading's UTC. A step counts from
// the first read that sees it: that read cannot tell that no read returned
// the old frame's time since the step, so the watermark is the old frame's
// time at that read: the clock holds for the size of the step from that
// read on, rather than from the step itself.
//
// A read takes no lock and never waits for another goroutine, on any path:
// it publishes a re-based or lowered frame with one compare-and-swap from
// the frame it read through, and starts again on the frame it finds when
// another read or a replacement changed it first; a frame parked for a
// lowering is finished by whichever read or replacement finds it, so a
// goroutine stopped in the middle of one holds up no read. A read
// allocates nothing on success unless the wall disagrees with the frame.
func (h *Handle) Snapshot() (Snapshot, error) {
	t, err := h.Now()
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Generation: h.generation, Time: t}, nil
}

// check validates in against the handle's binding.
func (h *Handle) check(in *Installation, op string) error {
	switch {
	case in.lc.State == StateMissing:
		return &ClockError{Op: op, Domain: h.alloc.domain, Generation: h.generation, Err: ErrDomainMissing}
	case in.lc.State == StateStopped:
		return &ClockError{Op: op, Domain: h.alloc.domain, Generation: h.generation, Err: ErrDomainStopped}
	case in.lc.Generation != h.generation:
		return &ClockError{Op: op, Domain: h.alloc.domain, Generation: h.generation, Err: ErrStaleGeneration}
	case !in.lc.State.Readable():
		return &ClockError{Op: op, Domain: h.alloc.domain, Generation: h.generation, Err: ErrClockUninstalled}
	}
	return nil
}

func (h *Handle) read(in *Installation, op string) (Snapshot, error) {
	// The fast path's condition is check's nil outcome: a readable state of
	// the bound generation.
	if in.lc.Generation == h.generation && in.lc.State.Readable() {
		if t, ok := in.clock.readFast(h.src); ok {
			return Snapshot{Generation: h.generation, Time: t}, nil
		}
	}
	return h.readSlow(in, op)
}

// readSlow is read when the installation does not validate or the fast
// path declined: it reports the failure, or takes the frame's slow path,
// which takes no lock either.
func (h *Handle) readSlow(in *Installation, op string) (Snapshot, error) {
	if err := h.check(in, op); err != nil {
		return Snapshot{}, err
	}
	t, err := in.clock.readSlow(h.src)
	if err != nil {
		return Snapshot{}, &ClockError{Op: op, Domain: h.alloc.domain, Generation: h.generation, Err: ErrClockOverflow, Cause: err}
	}
	return Snapshot{Generation: h.generation, Time: t}, nil
}
