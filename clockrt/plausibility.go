package clockrt

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nspl-dev/nspl/clock"
)

// DefaultMaxClockOffset is the default bound on how far an authority's
// UTC may run ahead of a receiver's (Registry.SetMaxClockOffset).
const DefaultMaxClockOffset = 500 * time.Millisecond

// SetMaxClockOffset sets the bound on how far ahead of this node's UTC a
// clock authority's UTC may be for its progress to be plausible; see
// AcceptProgress. A negative d is treated as zero. The default is
// DefaultMaxClockOffset. It is safe to call at any time and applies to the
// reports evaluated after it returns.
func (r *Registry) SetMaxClockOffset(d time.Duration) {
	r.maxOffset.Store(int64(max(d, 0)))
}

// MaxClockOffset returns the bound SetMaxClockOffset set.
func (r *Registry) MaxClockOffset() time.Duration { return time.Duration(r.maxOffset.Load()) }

// checkPlausible refuses a report, already known to match the installed
// fence, that the authority could not have produced from the installed
// mapping by a clock at most offset ahead of this node's UTC now:
//
//   - its boundary is not origin + (id − 1) × period of the installed
//     mapping and period (clock.TickBoundary), origin being the mapping's
//     LogicalStart;
//   - its authority UTC is after now + offset;
//   - its tick id is after the latest tick due at the projection of
//     now + offset (clock.LatestDueTick of Mapping.Project), which admits
//     up to about offset × rate / period ticks beyond the one due here.
//
// A projection beyond signed Unix nanoseconds counts as the largest
// logical instant: every tick with a representable boundary is then due.
func checkPlausible(lc Lifecycle, rep ProgressReport, now int64, offset time.Duration) error {
	implausible := func(format string, args ...any) error {
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrImplausibleProgress,
			Detail: fmt.Sprintf(format, args...)}
	}
	origin := lc.Mapping.LogicalStart
	want, err := clock.TickBoundary(origin, lc.Period, rep.ID)
	if err != nil {
		return implausible("tick %d has no boundary under the installed mapping: %v", rep.ID, err)
	}
	if rep.Boundary != want {
		return implausible("tick %d reports boundary %d; the installed mapping puts it at %d", rep.ID, rep.Boundary, want)
	}
	limit := now
	if off := int64(offset); limit > math.MaxInt64-off {
		limit = math.MaxInt64
	} else {
		limit += off
	}
	if rep.AuthorityUTC > limit {
		return implausible("authority UTC %d is more than the max clock offset %s ahead of this node's UTC %d",
			rep.AuthorityUTC, offset, now)
	}
	logical, err := lc.Mapping.Project(limit)
	if errors.Is(err, clock.ErrOverflow) {
		logical = math.MaxInt64
	} else if err != nil {
		return implausible("the installed mapping does not project this node's UTC: %v", err)
	}
	due, _, err := clock.LatestDueTick(origin, lc.Period, logical)
	if err != nil {
		due = math.MaxUint64
	}
	if rep.ID > due {
		return implausible("tick %d is ahead of tick %d, the latest due at this node's UTC plus the max clock offset %s",
			rep.ID, due, offset)
	}
	return nil
}
