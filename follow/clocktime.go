package follow

import (
	"fmt"
	"math"
	"time"

	"github.com/nspl-dev/nspl/clock"
)

// The followed clock in Go's types. Instants are time.Time (returned in
// UTC) and spans time.Duration; the arithmetic underneath is package
// clock's on signed Unix nanoseconds, so an instant outside years 1677 to
// 2262 is an error wrapping clock.ErrOverflow, never a wrapped value.

// LogicalAt returns the domain's logical time at the UTC instant utc: the
// paced projection rounded down to the nanosecond, or utc itself for an
// unpaced clock. A stopped or uninstalled clock is an error wrapping
// clock.ErrNotReadable; a utc or a result outside signed Unix nanoseconds
// one wrapping clock.ErrOverflow.
func (c Clock) LogicalAt(utc time.Time) (time.Time, error) {
	u, err := unixNanos("utc", utc)
	if err != nil {
		return time.Time{}, err
	}
	l, err := c.Observed.LogicalAt(u)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, l).UTC(), nil
}

// WaitUntil returns how long after the UTC instant utc the domain's logical
// time reaches target, rounded up so a wait never ends early; 0 when target
// is already reached. A stopped or uninstalled clock is an error wrapping
// clock.ErrNotReadable; a wait longer than time.Duration holds (about 292
// years, possible at a low TIME RATE) one wrapping clock.ErrOverflow.
func (c Clock) WaitUntil(utc, target time.Time) (time.Duration, error) {
	u, err := unixNanos("utc", utc)
	if err != nil {
		return 0, err
	}
	tg, err := unixNanos("target", target)
	if err != nil {
		return 0, err
	}
	w, err := c.Observed.WaitUntil(u, tg)
	if err != nil {
		return 0, err
	}
	if w > math.MaxInt64 {
		return 0, fmt.Errorf("wait of %dns until %s does not fit a time.Duration; wait for a nearer target: %w",
			w, target.UTC().Format(time.RFC3339Nano), clock.ErrOverflow)
	}
	return time.Duration(w), nil
}

// Window returns the paced admission window at the UTC instant utc: the
// newest 256 tick centers reached by the logical time LogicalAt(utc) and
// their inclusive skew, reconstructed from the mapping as a node's
// ingestion does. A clock that is not paced is an error wrapping
// clock.ErrNotReadable.
func (c Clock) Window(utc time.Time) (Window, error) {
	u, err := unixNanos("utc", utc)
	if err != nil {
		return Window{}, err
	}
	w, err := c.Observed.WindowAt(u)
	if err != nil {
		return Window{}, err
	}
	return Window{w: w}, nil
}

// Admits reports whether the logical timestamp t is admitted by the window
// the newest received tick reached: within the skew of one of the newest
// 256 tick centers up to that tick's boundary. It needs no UTC: between two
// ticks the reached window does not change, so a session that keeps up with
// its clock's ticks admits what the authority's node admits. A clock that is
// not paced, or has no tick of its generation yet, admits nothing.
func (c Clock) Admits(t time.Time) bool {
	o := c.Observed
	if o.State != clock.Paced || c.Tick.ID == 0 || c.Tick.Generation != o.Generation {
		return false
	}
	ts, err := unixNanos("t", t)
	if err != nil {
		return false
	}
	w, err := clock.NewWindow(o.LogicalStart, o.Period, o.Skew, c.Tick.Boundary)
	if err != nil {
		return false
	}
	return w.Admit(ts)
}

// Window is a paced clock's admission window in Go's types: the eligible
// tick centers origin + n × period of its newest 256 reached positions, each
// admitting logical timestamps within the inclusive skew. It is an
// immutable value, safe for concurrent use; the zero Window admits nothing.
type Window struct{ w clock.Window }

// Admits reports whether the logical timestamp t lies within the skew of an
// eligible center.
func (w Window) Admits(t time.Time) bool {
	ts, err := unixNanos("t", t)
	return err == nil && w.w.Admit(ts)
}

// Newest returns the center of the newest reached position, the last tick
// boundary the window's logical time reached.
func (w Window) Newest() time.Time { return time.Unix(0, w.w.LastCenter()).UTC() }

// Oldest returns the center of the oldest eligible position.
func (w Window) Oldest() time.Time { return time.Unix(0, w.w.FirstCenter()).UTC() }

// Bounds returns the earliest and latest admissible timestamps, Oldest −
// skew and Newest + skew (clamped to signed Unix nanoseconds); timestamps
// between two centers may still be refused when the skew leaves gaps.
func (w Window) Bounds() (earliest, latest time.Time) {
	lo, hi := w.w.Bounds()
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC()
}

// Skew returns the inclusive distance a timestamp may lie from a center,
// saturated at the largest time.Duration.
func (w Window) Skew() time.Duration { return saturated(w.w.Skew()) }

// Period returns the distance between centers, saturated at the largest
// time.Duration.
func (w Window) Period() time.Duration { return saturated(w.w.Period()) }

func saturated(ns uint64) time.Duration {
	if ns > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// unixNanos returns t in signed Unix nanoseconds, or an error wrapping
// clock.ErrOverflow naming what when t lies outside them.
func unixNanos(what string, t time.Time) (int64, error) {
	if t.Before(minInstant) || t.After(maxInstant) {
		return 0, fmt.Errorf("%s %s is outside the signed Unix-nanosecond range (years 1677 to 2262); give an instant inside it: %w",
			what, t.UTC().Format(time.RFC3339Nano), clock.ErrOverflow)
	}
	return t.UnixNano(), nil
}
