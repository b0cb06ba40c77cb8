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
	clamped  bool   // cFirst − skew is below MinInt64, so lo is MinInt64
	nonEmpty bool
	// The remainder test of a window with gaps (see near): magic is
	// ceil(2^128 / period), shift is floor(skew × 2^128 / period) and limit
	// is shift + ceil((skew+1) × 2^128 / period), all 128-bit, high word first.
	magicHi, magicLo uint64
	shiftHi, shiftLo uint64
	limitHi, limitLo uint64
	// spanLimit is ceil((2×skew+1) × 2^128 / period), the threshold of the
	// single-offset test used when the lower bound is not clamped.
	spanLimitHi, spanLimitLo uint64
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
	// cFirst − MinInt64 is cFirst with its sign bit flipped, read unsigned.
	w.clamped = skew > uint64(w.cFirst)^1<<63
	w.lo = math.MinInt64
	if !w.clamped {
		w.lo = int64(uint64(w.cFirst) - skew)
	}
	w.hi = math.MaxInt64
	if b, ok := addOffset(w.cLast, skew); ok {
		w.hi = b
	}
	if !w.covered {
		w.prepareRemainder()
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

// prepareRemainder prepares the exact remainder test for a window with gaps
// between tolerances, where 2×skew+1 < period and so period ≥ 2.
//
// Lemire, Kaser and Kurz ("Faster remainder by direct computation", 2019)
// show that with magic = ceil(2^128/period) and frac = magic × off mod 2^128,
// off mod period = floor(frac × period / 2^128) exactly for every 64-bit off
// and period < 2^64. The remainder r is therefore at most skew exactly when
// frac < ceil((skew+1) × 2^128 / period), and at least period − skew exactly
// when frac ≥ 2^128 − floor(skew × 2^128 / period). Adding shift =
// floor(skew × 2^128 / period) modulo 2^128 rotates both ranges into one,
// so a row is near a center exactly when frac + shift < limit: one 64×64
// multiply, one multiply-low, and a 128-bit add and compare per row.
func (w *Window) prepareRemainder() {
	d := w.period
	// magic = floor((2^128 − 1) / d) + 1.
	qh, r := bits.Div64(0, math.MaxUint64, d)
	ql, _ := bits.Div64(r, math.MaxUint64, d)
	var c uint64
	w.magicLo, c = bits.Add64(ql, 1, 0)
	w.magicHi = qh + c
	// shift = floor(skew × 2^128 / d); skew < d, so it fits in 128 bits.
	sh, r := bits.Div64(w.skew, 0, d)
	sl, _ := bits.Div64(r, 0, d)
	w.shiftHi, w.shiftLo = sh, sl
	// ceil((skew+1) × 2^128 / d) < 2^128 because skew+1 < d.
	ah, r := bits.Div64(w.skew+1, 0, d)
	al, r := bits.Div64(r, 0, d)
	if r != 0 {
		al, c = bits.Add64(al, 1, 0)
		ah += c
	}
	// limit = shift + that ceiling ≤ 2^128 − 1, because 2×skew+1 < d.
	w.limitLo, c = bits.Add64(sl, al, 0)
	w.limitHi = sh + ah + c
	// ceil((2×skew+1) × 2^128 / d) < 2^128 because 2×skew+1 < d.
	bh, r := bits.Div64(2*w.skew+1, 0, d)
	bl, r := bits.Div64(r, 0, d)
	if r != 0 {
		bl, c = bits.Add64(bl, 1, 0)
		bh += c
	}
	w.spanLimitHi, w.spanLimitLo = bh, bl
}

// near reports whether off mod period is within skew of 0 or of period; see
// prepareRemainder.
func (w *Window) near(off uint64) bool {
	h, l := bits.Mul64(w.magicLo, off)
	h += w.magicHi * off
	l, c := bits.Add64(l, w.shiftLo, 0)
	h += w.shiftHi + c
	_, b := bits.Sub64(l, w.limitLo, 0)
	_, b = bits.Sub64(h, w.limitHi, b)
	return b != 0
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
	return w.near(uint64(ts) - uint64(w.cFirst))
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
				word |= b2u(uint64(t)-lo <= span) << (uint(j) & 63)
			}
			accepted[i/64] = word
			count += bits.OnesCount64(word)
		}
		return count
	}
	if !w.clamped {
		return w.admitBatchFromLower(ts, accepted)
	}
	// The lower bound is clamped to MinInt64, so an offset from the first
	// center minus skew could need 65 bits; offsets are taken from lo
	// instead, with the remainder rotated by shift (see prepareRemainder).
	// x = ts − lo is in [0, span] for rows in
	// range, and x ≤ head for rows in [lo, cFirst], which lie within skew of
	// the first center and are admitted; their wrapped offset is ignored.
	head := uint64(w.cFirst) - lo
	mh, ml := w.magicHi, w.magicLo
	sh, sl := w.shiftHi, w.shiftLo
	lh, ll := w.limitHi, w.limitLo
	for i := 0; i < n; i += 64 {
		row := ts[i:min(i+64, n)]
		var word uint64
		for j, t := range row {
			x := uint64(t) - lo
			in := x <= span
			below := x <= head
			off := x - head
			h, l := bits.Mul64(ml, off)
			h += mh * off
			l, c := bits.Add64(l, sl, 0)
			h += sh + c
			_, b := bits.Sub64(l, ll, 0)
			_, b = bits.Sub64(h, lh, b)
			word |= (b2u(in) & (b2u(below) | b)) << (uint(j) & 63)
		}
		accepted[i/64] = word
		count += bits.OnesCount64(word)
	}
	return count
}

// admitBatchFromLower is AdmitBatch for a window with gaps whose lower bound
// lo = cFirst − skew is not clamped. Every in-range row then has the exact
// offset x = ts − lo < 2^64 from lo, and it is admitted exactly when
// x mod period ≤ 2×skew; with frac = magic × x mod 2^128 that is
// frac < spanLimit. A row outside [lo, hi] fails the range test whatever
// its remainder, so each row costs one subtraction, one 64×64 multiply, one
// multiply-low and two compares.
func (w Window) admitBatchFromLower(ts []int64, accepted []uint64) int {
	lo := uint64(w.lo)
	span := uint64(w.hi) - lo
	mh, ml := w.magicHi, w.magicLo
	lh, ll := w.spanLimitHi, w.spanLimitLo
	count := 0
	n := len(ts)
	for i := 0; i < n; i += 64 {
		row := ts[i:min(i+64, n)]
		var word uint64
		for j, t := range row {
			x := uint64(t) - lo
			in := b2u(x <= span)
			h, l := bits.Mul64(ml, x)
			h += mh * x
			_, b := bits.Sub64(l, ll, 0)
			_, b = bits.Sub64(h, lh, b)
			word |= (in & b) << (uint(j) & 63)
		}
		accepted[i/64] = word
		count += bits.OnesCount64(word)
	}
	return count
}
