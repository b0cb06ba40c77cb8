package clock

import (
	"math"
	"math/bits"
)

// Validate reports whether m.Rate is a positive finite float64. Every such
// value, subnormals included, is valid; the error wraps ErrInvalidRate.
func (m Mapping) Validate() error {
	if _, ok := decompose(m.Rate); !ok {
		return invalidRate(m.Rate)
	}
	return nil
}

// Project returns the logical time at the UTC observation wallNow:
//
//	LogicalStart + floor(max(0, wallNow − WallStartedAt) × Rate)
//
// computed from the exact real product, never a rounded float product, so a
// read never claims a logical nanosecond that has not been reached. An
// observation before WallStartedAt contributes no elapsed time. The elapsed
// time may be anything up to 2^64−1 ns. Project returns an error wrapping
// ErrInvalidRate for an invalid rate and an *OverflowError (op "project")
// when the result leaves signed Unix nanoseconds. Rate 1 takes an integer
// fast path with identical results.
func (m Mapping) Project(wallNow int64) (int64, error) {
	var elapsed uint64
	if wallNow > m.WallStartedAt {
		elapsed = uint64(wallNow) - uint64(m.WallStartedAt)
	}
	var delta uint64
	if m.Rate == 1 {
		delta = elapsed
	} else {
		p, ok := decompose(m.Rate)
		if !ok {
			return 0, invalidRate(m.Rate)
		}
		if delta, ok = p.mulFloor(elapsed); !ok {
			return 0, m.projectOverflow(wallNow)
		}
	}
	logical, ok := addOffset(m.LogicalStart, delta)
	if !ok {
		return 0, m.projectOverflow(wallNow)
	}
	return logical, nil
}

// Projector is a valid Mapping prepared for repeated projection: its rate is
// decomposed once, and a rate that is a whole number (1, 60, 2^40) projects
// with one 64-bit multiply instead of the 128-bit product. It gives exactly
// Mapping.Project's results and errors (FuzzArithmetic holds the two
// equal). The zero Projector is not prepared; get one from
// Mapping.Projector. A Projector is not modified after it is made, so it is
// safe for concurrent use.
type Projector struct {
	m     Mapping
	p     rateParts
	whole bool   // the rate is the integer mul
	mul   uint64 // the rate, when whole
	limit uint64 // the largest elapsed time whose product with mul fits, when whole
}

// Projector returns m prepared for projection, or an error wrapping
// ErrInvalidRate.
func (m Mapping) Projector() (Projector, error) {
	p, ok := decompose(m.Rate)
	if !ok {
		return Projector{}, invalidRate(m.Rate)
	}
	pr := Projector{m: m, p: p}
	if p.exp >= 0 && bits.Len64(p.mant)+p.exp <= 64 {
		pr.whole, pr.mul = true, p.mant<<uint(p.exp)
		pr.limit = math.MaxUint64 / pr.mul
	}
	return pr, nil
}

// Mapping returns the mapping pr projects.
func (pr *Projector) Mapping() Mapping { return pr.m }

// Project returns what Mapping.Project(wallNow) returns for pr's mapping.
func (pr *Projector) Project(wallNow int64) (int64, error) {
	var elapsed uint64
	if wallNow > pr.m.WallStartedAt {
		elapsed = uint64(wallNow) - uint64(pr.m.WallStartedAt)
	}
	var delta uint64
	switch {
	case pr.whole && elapsed <= pr.limit:
		delta = elapsed * pr.mul
	case pr.whole:
		return 0, pr.m.projectOverflow(wallNow)
	default:
		var ok bool
		if delta, ok = pr.p.mulFloor(elapsed); !ok {
			return 0, pr.m.projectOverflow(wallNow)
		}
	}
	logical, ok := addOffset(pr.m.LogicalStart, delta)
	if !ok {
		return 0, pr.m.projectOverflow(wallNow)
	}
	return logical, nil
}

func (m Mapping) projectOverflow(wallNow int64) error {
	return overflow("project", RangeTimestamp, "logical start %d + (wall %d − wall start %d) × rate %s",
		m.LogicalStart, wallNow, m.WallStartedAt, formatRate(m.Rate))
}

// Wait returns the physical nanoseconds that must elapse before logical time
// advances from current to target:
//
//	ceil((target − current) / Rate)
//
// of the exact real quotient, so a logical deadline never fires early. The
// result is 0 when target ≤ current and at least 1 when the delta is
// positive. Wait returns an error wrapping ErrInvalidRate for an invalid
// rate and an *OverflowError (op "wait") when the wait does not fit in
// unsigned 64-bit nanoseconds.
func (m Mapping) Wait(current, target int64) (uint64, error) {
	if target <= current {
		if err := m.Validate(); err != nil {
			return 0, err
		}
		return 0, nil
	}
	return m.WaitDelta(uint64(target) - uint64(current))
}

// WaitDelta returns ceil(delta / Rate) physical nanoseconds for a logical
// delta of up to 2^64−1 ns, with the same rounding and errors as Wait. It
// is the physical spacing of logical durations such as one tick period.
func (m Mapping) WaitDelta(delta uint64) (uint64, error) {
	if m.Rate == 1 {
		return delta, nil
	}
	p, ok := decompose(m.Rate)
	if !ok {
		return 0, invalidRate(m.Rate)
	}
	wait, ok := p.divCeil(delta)
	if !ok {
		return 0, overflow("wait", RangeDuration, "logical delta %dns / rate %s", delta, formatRate(m.Rate))
	}
	return wait, nil
}

// WallAt returns the earliest UTC instant at or after WallStartedAt whose
// projection reaches target: Project(WallAt(t)) ≥ t, and when the result is
// after WallStartedAt, Project(WallAt(t)−1) < t. A target at or before
// LogicalStart is reached from the start, so WallAt returns WallStartedAt
// for it. WallAt returns an error wrapping ErrInvalidRate for an invalid
// rate and an *OverflowError (op "wall at") when the instant leaves signed
// Unix nanoseconds.
func (m Mapping) WallAt(target int64) (int64, error) {
	wait, err := m.Wait(m.LogicalStart, target)
	if err != nil {
		return 0, err
	}
	wall, ok := addOffset(m.WallStartedAt, wait)
	if !ok {
		return 0, overflow("wall at", RangeTimestamp, "wall start %d + (target %d − logical start %d) / rate %s",
			m.WallStartedAt, target, m.LogicalStart, formatRate(m.Rate))
	}
	return wall, nil
}
