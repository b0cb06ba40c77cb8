package clockrt

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// generationClock is what every installation of one generation on one node
// shares for its reads: the generation's frame, published atomically and
// read-mostly. The frame's floor is the generation's read watermark.
//
// A reading's UTC is the time source's paired reading taken through the
// frame: the wall at the frame's calibration plus the monotonic time
// elapsed since. A read that finds the wall within the source's pair
// tolerance of that UTC projects it and stores nothing, so reads on
// several cores share the frame's cache line without writing it. No read
// takes a lock or waits for another goroutine: every change of the frame
// is one compare-and-swap from the frame it was derived from, and a read
// whose swap fails (another read or a replacement changed the frame first)
// starts again on the frame it finds. On a disagreement:
//
//   - a wall ahead of the frame (UTC stepped forward, or the calibrating
//     pair's halves were far apart) re-bases the frame forward, which can
//     only raise later reads;
//   - a wall behind it, confirmed by a second reading, is a backward step:
//     the frame is parked (replaced by a parked frame naming it, so that no
//     read completes on it any longer), a fresh reading taken after parking
//     bounds every value a read of the old frame could have returned, and
//     the lowered frame is published in the parked frame's place with that
//     bound, at least the old floor, as its floor. Reads return
//     max(floor, projection) until the lowered frame's projection passes
//     the floor.
//
// Any goroutine that loads a parked frame finishes it: the read that
// parked it, any read that finds it, or a replacement (reproject). Each
// takes its own reading after loading the parked frame, so after the
// parking; the first whose swap succeeds publishes the lowered frame, and
// the others start again on it. A read is therefore never held up by a
// goroutine stopped between parking and publishing. The watermark is
// raised only by such a swap, to at least the floor it replaces, so it
// never falls within the generation.
//
// A fast read loads the frame, takes its reading and loads the frame again:
// it completes on the frame only if the frame is still published, so its
// reading was taken before any parking that followed and the bound covers
// it; a slow read that completes on a frame checks the same. A frame is
// published at most once (each change stores a new one), so a frame still
// published has been published throughout. That relies on the source
// ordering its readings with the atomic loads around them, as the system
// clock's vDSO reads (fenced) and the fake's lock do.
type generationClock struct {
	frame atomic.Pointer[frame] // never nil
}

// newGenerationClock calibrates a generation's first frame for lc from one
// reading of src.
func newGenerationClock(src timesource.Source, lc Lifecycle) *generationClock {
	c := &generationClock{}
	c.frame.Store(newFrame(src.Paired(), tolerance(src), lc, math.MinInt64))
	return c
}

// watermark returns the floor of the generation's newest frame: of the
// frame being lowered while one is parked. Floors never decrease from one
// frame to the next.
func (c *generationClock) watermark() int64 {
	f := c.frame.Load()
	if f.parked != nil {
		f = f.parked.from
	}
	return f.floor
}

func tolerance(src timesource.Source) uint64 {
	return uint64(max(src.PairTolerance(), 0))
}

// frame is one immutable calibration of a generation's clock: the reading
// it was calibrated from, the floor its reads hold to and the projection
// its reads take. It carries the projection, not just the offset, so that
// a replacement of the same generation that changes the projection
// publishes a new frame and every read, whichever installation it loaded,
// projects through the frame it validated.
type frame struct {
	parked *lowering     // non-nil only on a parked frame, whose other fields are unset
	wall   int64         // UTC at calibration
	mono   time.Duration // the monotonic reading paired with wall
	floor  int64         // reads return at least this; math.MinInt64 for none
	tol    uint64        // the source's pair tolerance in nanoseconds
	paced  bool
	proj   clock.Projector // the paced mapping, prepared; zero unless paced
}

// lowering is what a parked frame names: the frame it parked, whose reads
// the lowered frame's floor bounds, and the frame whose projection the
// lowered frame takes (from itself for a backward step of UTC, the
// replacement's for a change of projection).
type lowering struct {
	from, to *frame
}

// newFrame returns a frame calibrated at r that projects as lc, a validated
// lifecycle, does.
func newFrame(r timesource.Reading, tol uint64, lc Lifecycle, floor int64) *frame {
	f := &frame{wall: r.Wall, mono: r.Mono, floor: floor, tol: tol, paced: lc.State == StatePaced}
	if f.paced {
		// Install validated the mapping, so its rate decomposes.
		f.proj, _ = lc.Mapping.Projector()
	}
	return f
}

// sameProjection reports whether f projects as lc does.
func (f *frame) sameProjection(lc Lifecycle) bool {
	if f.paced != (lc.State == StatePaced) {
		return false
	}
	return !f.paced || f.proj.Mapping() == lc.Mapping
}

// utc returns the frame's UTC at the monotonic reading mono: the calibrated
// wall plus the monotonic time elapsed since calibration. A reading before
// the calibration (which a validated read never takes) counts no elapsed
// time, and the sum saturates at the largest int64: each claims at most the
// time some reading reached.
func (f *frame) utc(mono time.Duration) int64 {
	if mono <= f.mono {
		return f.wall
	}
	elapsed := uint64(mono) - uint64(f.mono)
	if elapsed > uint64(math.MaxInt64)-uint64(f.wall) {
		return math.MaxInt64
	}
	return int64(uint64(f.wall) + elapsed)
}

// Results of frame.compare.
const (
	wallBehind = -1
	wallAgrees = 0
	wallAhead  = 1
)

// compare places wall against the frame's UTC u: within the frame's
// tolerance either way it agrees; otherwise it is behind or ahead.
func (f *frame) compare(wall, u int64) int {
	switch {
	case wall >= u && uint64(wall)-uint64(u) > f.tol:
		return wallAhead
	case wall < u && uint64(u)-uint64(wall) > f.tol:
		return wallBehind
	}
	return wallAgrees
}

// project returns the logical time at the frame's UTC u, at least the
// frame's floor: u itself when unpaced.
func (f *frame) project(u int64) (int64, error) {
	t := u
	if f.paced {
		var err error
		if t, err = f.proj.Project(u); err != nil {
			return 0, err
		}
	}
	return max(t, f.floor), nil
}

// bound returns the largest value a read of f with a monotonic reading at
// or before mono can have returned. A projection past the largest int64
// bounds them by the largest int64, the most any read returned.
func (f *frame) bound(mono time.Duration) int64 {
	t, err := f.project(f.utc(mono))
	if err != nil {
		return math.MaxInt64
	}
	return t
}

// readFast returns the generation's logical time from one reading of src
// if the frame is published, and not parked, before and after the reading
// and the wall agrees with it; otherwise it declines (false) and the caller
// takes readSlow, which also reports a projection that fails.
func (c *generationClock) readFast(src timesource.Source) (int64, bool) {
	f := c.frame.Load()
	if f.parked != nil {
		return 0, false
	}
	r := src.Paired()
	if c.frame.Load() != f {
		return 0, false
	}
	u := f.utc(r.Mono)
	if f.compare(r.Wall, u) != wallAgrees {
		return 0, false
	}
	if !f.paced {
		return max(u, f.floor), true
	}
	t, err := f.proj.Project(u)
	if err != nil {
		return 0, false
	}
	return max(t, f.floor), true
}

// readSlow is a read that found the frame parked or replaced, or the wall
// away from it: it finishes a parked frame, reads again and changes the
// frame if the disagreement holds, starting again whenever the frame it
// read through was changed under it. It takes no lock.
func (c *generationClock) readSlow(src timesource.Source) (int64, error) {
	for {
		f := c.frame.Load()
		if f.parked != nil {
			if nf := c.finish(src, f); nf != nil {
				return nf.project(nf.wall)
			}
			continue
		}
		r := src.Paired()
		u := f.utc(r.Mono)
		cmp := f.compare(r.Wall, u)
		if cmp == wallBehind {
			// A pair whose wall half was read long before its monotonic
			// half looks like a backward step; a second reading tells them
			// apart.
			r = src.Paired()
			u = f.utc(r.Mono)
			cmp = f.compare(r.Wall, u)
		}
		switch cmp {
		case wallAgrees:
			if c.frame.Load() != f {
				continue
			}
			return f.project(u)
		case wallBehind:
			if nf := c.lower(src, f, f); nf != nil {
				return nf.project(nf.wall)
			}
			continue
		}
		// The wall is ahead: re-base the frame forward. Every UTC the new
		// frame gives from here on exceeds what the old one would have
		// given, so no read falls, and the floor carries over.
		nf := f.at(r, f.floor)
		if c.frame.CompareAndSwap(f, nf) {
			return nf.project(nf.wall)
		}
	}
}

// lower parks f, if it is still the published frame, for a frame that
// projects as to does (f itself for a backward step of UTC, the
// replacement's frame for a change of projection), and finishes the
// parking. It returns the lowered frame if this call published it, or nil
// if f was no longer published or another goroutine finished the parking.
func (c *generationClock) lower(src timesource.Source, f, to *frame) *frame {
	p := &frame{parked: &lowering{from: f, to: to}}
	if !c.frame.CompareAndSwap(f, p) {
		return nil
	}
	return c.finish(src, p)
}

// finish publishes the lowered frame in place of p, a parked frame: one
// projecting as p's to does, calibrated from a reading taken after p was
// loaded (so after the parking), whose floor bounds every value a read of
// the parked frame returned. It returns the lowered frame, or nil if
// another goroutine finished p first.
func (c *generationClock) finish(src timesource.Source, p *frame) *frame {
	// Every read that completed on the parked frame took its reading
	// before the parking, so this reading is at or after all of theirs.
	r := src.Paired()
	from := p.parked.from
	nf := p.parked.to.at(r, max(from.floor, from.bound(r.Mono)))
	if !c.frame.CompareAndSwap(p, nf) {
		return nil
	}
	return nf
}

// reproject makes the generation's frame project as lc does, for a
// replacement installation of the same generation. An unchanged projection
// keeps the frame; a changed one is published like a backward step, with
// a floor bounding every value the old projection returned. Install calls
// it under the registry's lock, which no read takes: reads that find the
// frame parked finish the parking themselves, and a read's change of a
// frame of the old projection fails once the parked frame is published, so
// that every frame published from then on projects as lc does.
func (c *generationClock) reproject(src timesource.Source, lc Lifecycle) {
	for {
		f := c.frame.Load()
		switch {
		case f.parked != nil:
			c.finish(src, f)
		case f.sameProjection(lc):
			return
		default:
			c.lower(src, f, newFrame(timesource.Reading{}, f.tol, lc, math.MinInt64))
		}
	}
}

// at returns a copy of f, which is not parked, calibrated at r with the
// given floor.
func (f *frame) at(r timesource.Reading, floor int64) *frame {
	nf := *f
	nf.wall, nf.mono, nf.floor = r.Wall, r.Mono, floor
	return &nf
}
