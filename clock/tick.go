package clock

import "math/bits"

// TickBoundary returns the logical boundary of the one-based tick id:
//
//	origin + (id − 1) × period
//
// Tick 1 is the origin. period may use the whole unsigned 64-bit range. It
// returns an error wrapping ErrInvalidTick for id 0, ErrInvalidPeriod for
// period 0, and an *OverflowError (op "tick boundary") when the boundary
// leaves signed Unix nanoseconds.
func TickBoundary(origin int64, period uint64, id uint64) (int64, error) {
	if period == 0 {
		return 0, invalidPeriod("tick boundary")
	}
	if id == 0 {
		return 0, errInvalidTick()
	}
	hi, off := bits.Mul64(id-1, period)
	if hi == 0 {
		if b, ok := addOffset(origin, off); ok {
			return b, nil
		}
	}
	return 0, overflow("tick boundary", RangeTimestamp, "origin %d + (tick %d − 1) × period %dns", origin, id, period)
}

// LatestDueTick returns the newest tick whose boundary is at or before the
// logical instant now, and that boundary, by direct arithmetic: a producer
// that fell several periods behind emits only this tick. Before the origin
// no tick is due and LatestDueTick returns id 0 and boundary 0. It returns
// an error wrapping ErrInvalidPeriod for period 0 and an *OverflowError (op
// "latest due tick") when the id would exceed 2^64−1, which only period 1
// with the full 2^64−1 ns span reaches.
func LatestDueTick(origin int64, period uint64, now int64) (id uint64, boundary int64, err error) {
	if period == 0 {
		return 0, 0, invalidPeriod("latest due tick")
	}
	if now < origin {
		return 0, 0, nil
	}
	k := (uint64(now) - uint64(origin)) / period
	if k == ^uint64(0) {
		return 0, 0, overflow("latest due tick", RangeTickID, "(now %d − origin %d) / period %dns + 1", now, origin, period)
	}
	// k × period ≤ now − origin, so the boundary lies in [origin, now].
	return k + 1, int64(uint64(origin) + k*period), nil
}

// NextTick returns the first tick whose boundary is strictly after the
// logical instant now, and that boundary: the boundary a producer waits for
// after emitting the latest due tick. Before the origin it is tick 1 at the
// origin. It returns an error wrapping ErrInvalidPeriod for period 0 and an
// *OverflowError (op "next tick") when the id or boundary leaves its range.
func NextTick(origin int64, period uint64, now int64) (id uint64, boundary int64, err error) {
	if period == 0 {
		return 0, 0, invalidPeriod("next tick")
	}
	if now < origin {
		return 1, origin, nil
	}
	k := (uint64(now) - uint64(origin)) / period
	if k >= ^uint64(0)-1 {
		return 0, 0, overflow("next tick", RangeTickID, "(now %d − origin %d) / period %dns + 2", now, origin, period)
	}
	hi, off := bits.Mul64(k+1, period)
	if hi == 0 {
		if b, ok := addOffset(origin, off); ok {
			return k + 2, b, nil
		}
	}
	return 0, 0, overflow("next tick", RangeTimestamp, "origin %d + %d × period %dns", origin, k+1, period)
}
