package clock

import (
	"math"
	"math/bits"
)

// WindowPositions is the number of newest positions, ending at the reached
// frontier, whose centers are eligible for admission.
const WindowPositions = 256

// Window is a paced admission window reconstructed from the mapping alone:
// the eligible centers origin + n × period for the newest WindowPositions
// positions n ending at the reached frontier, each admitting event
// timestamps within the inclusive skew distance. Overlapping tolerances
// admit their union; gaps between them reject.
//
// A Window is an immutable value, safe for concurrent use, and cheap to
// copy. Its period reduction is prepared once by NewWindow, so admission
// performs no 64-bit division per event. The zero Window admits nothing.
type Window struct {
	origin   int64
	period   uint64
	skew     uint64
	frontier uint64
	first    uint64 // first eligible position
	cFirst   int64  // center of the first eligible position
	cLast    int64  // center of the frontier
	lo, hi   int64  // cFirst − skew and cLast + skew, clamped to int64
	covered  bool   // tolerances overlap or touch: [lo, hi] is admitted whole
	magicHi  uint64 // ceil(2^128 / period), for the exact remainder
	magicLo  uint64
	nonEmpty bool
}

// NewWindow reconstructs the admission window for the logical instant now of
// a paced domain with logical origin origin, period and skew:
//
//	frontier = floor((now − origin) / period)
//
// clamped at 0 (position 0 is eligible immediately on start, and before
// the origin). The eligible positions are max(0, frontier − 255) through the
// frontier; no future center is ever eligible, so an event can extend past
// the last reached center only by skew. It returns an error wrapping
// ErrInvalidPeriod for period 0. Every center lies in [origin, max(origin,
// now)], so no other input fails.
func NewWindow(origin int64, period, skew uint64, now int64) (Window, error) {
	if period == 0 {
		return Window{}, invalidPeriod("admission window")
	}
	var frontier uint64
	if now > origin {
		frontier = (uint64(now) - uint64(origin)) / period
	}
	var first uint64
	if frontier >= WindowPositions-1 {
		first = frontier - (WindowPositions - 1)
	}
	w := Window{
		origin:   origin,
		period:   period,
		skew:     skew,
		frontier: frontier,
		first:    first,
		// Both centers are at most max(origin, now), so the modular sums are exact.
		cFirst:   int64(uint64(origin) + first*period),
		cLast:    int64(uint64(origin) + frontier*period),
		covered:  skew >= period/2,
		nonEmpty: true,
	}
	w.lo = math.MinInt64
	// cFirst − MinInt64 is cFirst with its sign bit flipped, read unsigned.
	if room := uint64(w.cFirst) ^ 1<<63; skew <= room {
		w.lo = int64(uint64(w.cFirst) - skew)
	}
	w.hi = math.MaxInt64
	if b, ok := addOffset(w.cLast, skew); ok {
		w.hi = b
	}
	if !w.covered {
		// Not covered implies period ≥ 2, so ceil(2^128/period) fits in 128
		// bits: it is floor((2^128−1)/period) + 1.
		qh, r := bits.Div64(0, math.MaxUint64, period)
		ql, _ := bits.Div64(r, math.MaxUint64, period)
		var c uint64
		w.magicLo, c = bits.Add64(ql, 1, 0)
		w.magicHi = qh + c
	}
	return w, nil
}

// Origin returns the logical origin (the center of position 0).
func (w Window) Origin() int64 { return w.origin }

// Period returns the distance between adjacent centers in nanoseconds.
func (w Window) Period() uint64 { return w.period }

// Skew returns the inclusive tolerance around each center in nanoseconds.
func (w Window) Skew() uint64 { return w.skew }

// Frontier returns the reached frontier position.
func (w Window) Frontier() uint64 { return w.frontier }

// FirstPosition returns the first eligible position, max(0, frontier − 255).
func (w Window) FirstPosition() uint64 { return w.first }

// FirstCenter returns the center of the first eligible position.
func (w Window) FirstCenter() int64 { return w.cFirst }

// LastCenter returns the center of the frontier, the newest reached center.
func (w Window) LastCenter() int64 { return w.cLast }

// Bounds returns the first center minus skew and the last center plus skew,
// clamped to the int64 range: no timestamp outside [lo, hi] is admitted.
func (w Window) Bounds() (lo, hi int64) { return w.lo, w.hi }

// mod returns n mod period by Lemire's direct remainder with the 128-bit
// reciprocal prepared by NewWindow; it is exact for every 64-bit n and
// period ≥ 2.
func (w *Window) mod(n uint64) uint64 {
	h, l := bits.Mul64(w.magicLo, n)
	fh := h + w.magicHi*n // (magic × n) mod 2^128 is fh:l
	r1, _ := bits.Mul64(l, w.period)
	q1, q0 := bits.Mul64(fh, w.period)
	_, c := bits.Add64(q0, r1, 0)
	return q1 + c
}

// Admit reports whether the event timestamp ts lies within the inclusive
// skew distance of an eligible center, in constant time by testing the
// nearest eligible center.
func (w Window) Admit(ts int64) bool {
	if !w.nonEmpty || ts < w.lo || ts > w.hi {
		return false
	}
	if w.covered || ts <= w.cFirst {
		return true
	}
	r := w.mod(uint64(ts) - uint64(w.cFirst))
	return r <= w.skew || w.period-r <= w.skew
}

// BitmapWords returns the number of uint64 words AdmitBatch needs for n rows.
func BitmapWords(n int) int { return (n + 63) / 64 }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// AdmitBatch tests every event timestamp in ts exactly as Admit does and
// writes the result as a bitmap: bit i%64 of accepted[i/64] is set when
// ts[i] is admitted. It returns the number of admitted rows. It overwrites
// the first BitmapWords(len(ts)) words of accepted, leaving bits past the
// last row clear; when accepted is shorter, only the rows it has bits for
// are evaluated and the rest count as rejected.
//
// Each row is compared against the first and last reached centers (minus
// and plus skew) with one unsigned comparison, then tested with the exact
// period remainder prepared once per window, without branching per row.
func (w Window) AdmitBatch(ts []int64, accepted []uint64) int {
	n := len(ts)
	if words := len(accepted); n > words*64 {
		n = words * 64
	}
	ts = ts[:n]
	if !w.nonEmpty {
		clear(accepted[:BitmapWords(n)])
		return 0
	}
	lo := uint64(w.lo)
	span := uint64(w.hi) - lo
	count := 0
	if w.covered {
		for i := 0; i < n; i += 64 {
			row := ts[i:min(i+64, n)]
			var word uint64
			for j, t := range row {
				word |= b2u(uint64(t)-lo <= span) << uint(j)
			}
			accepted[i/64] = word
			count += bits.OnesCount64(word)
		}
		return count
	}
	cFirst := uint64(w.cFirst)
	skew, period := w.skew, w.period
	mh, ml := w.magicHi, w.magicLo
	for i := 0; i < n; i += 64 {
		row := ts[i:min(i+64, n)]
		var word uint64
		for j, t := range row {
			u := uint64(t)
			in := u-lo <= span
			// Before the first center (within skew, by the range test) every
			// row is admitted; its wrapped offset below is ignored.
			below := t <= int64(cFirst)
			off := u - cFirst
			h, l := bits.Mul64(ml, off)
			fh := h + mh*off
			r1, _ := bits.Mul64(l, period)
			q1, q0 := bits.Mul64(fh, period)
			_, c := bits.Add64(q0, r1, 0)
			r := q1 + c
			near := r <= skew || period-r <= skew
			word |= b2u(in && (below || near)) << uint(j)
		}
		accepted[i/64] = word
		count += bits.OnesCount64(word)
	}
	return count
}
