package runtime

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

// generationClock is what every installation of one generation on one node
// shares for its reads: the generation's frame, published atomically and
// read-mostly, and the watermark under which reads never fall.
//
// A reading's UTC is the time source's paired reading taken through the
// frame: the wall at the frame's calibration plus the monotonic time
// elapsed since. A read that finds the wall within the source's pair
// tolerance of that UTC projects it and stores nothing, so reads on
// several cores share the frame's cache line without writing it. Only a
// disagreement takes mu, and then:
//
//   - a wall ahead of the frame (UTC stepped forward, or the calibrating
//     pair's halves were far apart) re-bases the frame forward, which can
//     only raise later reads;
//   - a wall behind it, confirmed by a second reading, is a backward step:
//     the frame is parked (set to nil, so that no read completes on it
//     any longer), a fresh reading taken after parking bounds every value a
//     read of the old frame could have returned, the watermark is raised to
//     that bound, and only then is the lowered frame published with the
//     watermark as its floor. Reads return max(floor, projection) until the
//     lowered frame's projection passes the floor.
//
// A fast read loads the frame, takes its reading and loads the frame again:
// it completes on the frame only if the frame is still published, so its
// reading was taken before any parking that followed and the bound covers
// it. That relies on the source ordering its readings with the atomic
// loads around them, as the system clock's vDSO reads (fenced) and the
// fake's lock do.
type generationClock struct {
	frame     atomic.Pointer[frame] // nil only while mu is held
	watermark atomic.Int64          // the newest frame's floor; math.MinInt64 until a backward step
	mu        sync.Mutex            // serialises every frame change
}

// newGenerationClock calibrates a generation's first frame for lc from one
// reading of src.
func newGenerationClock(src timesource.Source, lc Lifecycle) *generationClock {
	c := &generationClock{}
	c.watermark.Store(math.MinInt64)
	c.frame.Store(newFrame(src.Paired(), tolerance(src), lc, math.MinInt64))
	return c
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
	wall  int64         // UTC at calibration
	mono  time.Duration // the monotonic reading paired with wall
	floor int64         // reads return at least this; math.MinInt64 for none
	tol   uint64        // the source's pair tolerance in nanoseconds
	paced bool
	proj  clock.Projector // the paced mapping, prepared; zero unless paced
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
// if the frame is published before and after the reading and the wall
// agrees with it; otherwise it declines (false) and the caller takes
// readSlow, which also reports a projection that fails.
func (c *generationClock) readFast(src timesource.Source) (int64, bool) {
	f := c.frame.Load()
	if f == nil {
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
// away from it: it reads again under mu and changes the frame if the
// disagreement holds.
func (c *generationClock) readSlow(src timesource.Source) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.frame.Load()
	r := src.Paired()
	u := f.utc(r.Mono)
	switch f.compare(r.Wall, u) {
	case wallAgrees:
		return f.project(u)
	case wallBehind:
		// A pair whose wall half was read long before its monotonic half
		// looks like a backward step; a second reading tells them apart.
		r = src.Paired()
		u = f.utc(r.Mono)
		switch f.compare(r.Wall, u) {
		case wallAgrees:
			return f.project(u)
		case wallBehind:
			nf := c.lowerLocked(src, f, f)
			return nf.project(nf.wall)
		}
	}
	// The wall is ahead: re-base the frame forward. Every UTC the new frame
	// gives from here on exceeds what the old one would have given, so no
	// read falls, and the floor carries over.
	nf := f.at(r, f.floor)
	c.frame.Store(nf)
	return nf.project(nf.wall)
}

// lowerLocked replaces f, the published frame, by one projecting as to
// does, calibrated after f is parked, whose floor bounds every value a read
// of f returned: for a backward step of UTC (to is f) or a change of the
// projection. It returns the new frame. c.mu must be held.
func (c *generationClock) lowerLocked(src timesource.Source, f, to *frame) *frame {
	c.frame.Store(nil)
	// Every read that completes on f took its reading before the parking
	// store above, so this reading is at or after all of theirs.
	r := src.Paired()
	floor := max(f.floor, f.bound(r.Mono))
	c.watermark.Store(floor)
	nf := to.at(r, floor)
	c.frame.Store(nf)
	return nf
}

// reproject makes the generation's frame project as lc does, for a
// replacement installation of the same generation. An unchanged projection
// keeps the frame; a changed one is published like a backward step, with
// a floor bounding every value the old projection returned.
func (c *generationClock) reproject(src timesource.Source, lc Lifecycle) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.frame.Load(); !f.sameProjection(lc) {
		c.lowerLocked(src, f, newFrame(timesource.Reading{}, f.tol, lc, math.MinInt64))
	}
}

// at returns a copy of f calibrated at r with the given floor.
func (f *frame) at(r timesource.Reading, floor int64) *frame {
	nf := *f
	nf.wall, nf.mono, nf.floor = r.Wall, r.Mono, floor
	return &nf
}
