package grammar

import (
	"math"
	"math/bits"

	"github.com/nspl-dev/nspl/literal"
)

// Nanoseconds in each duration unit. A month is 30.44 days and a year
// 365.25 days, both whole numbers of nanoseconds.
const (
	Nanosecond  uint64 = literal.Nanosecond
	Microsecond        = literal.Microsecond
	Millisecond        = literal.Millisecond
	Second             = literal.Second
	Minute             = literal.Minute
	Hour               = literal.Hour
	Day                = 24 * Hour
	Week               = 7 * Day
	Month              = 2630016 * Second  // 30.44 days
	Year               = 31557600 * Second // 365.25 days
)

// durationUnits maps every unit spelling to its length. Units are case
// sensitive: "m" is a minute and "M" a month.
var durationUnits = map[string]uint64{
	"ns": Nanosecond, "nsec": Nanosecond, "nanos": Nanosecond,
	"us": Microsecond, "usec": Microsecond,
	"ms": Millisecond, "msec": Millisecond, "millis": Millisecond,
	"s": Second, "sec": Second, "secs": Second, "second": Second, "seconds": Second,
	"m": Minute, "min": Minute, "mins": Minute, "minute": Minute, "minutes": Minute,
	"h": Hour, "hr": Hour, "hrs": Hour, "hour": Hour, "hours": Hour,
	"d": Day, "day": Day, "days": Day,
	"w": Week, "wk": Week, "wks": Week, "week": Week, "weeks": Week,
	"M": Month, "month": Month, "months": Month,
	"y": Year, "year": Year, "years": Year,
}

const unitHint = "use ns, us, ms, s, m, h, d, w, M (month) or y"

// ParseDuration converts duration text to unsigned nanoseconds with exact
// arithmetic. The text is one or more spans written together, each a whole or
// fractional number and a unit ("250ms", "1h30m", "1.5s"); a bare "0" is
// zero. Each span stands for its exact value, its number times its unit, and
// nothing is rounded before the spans are added: the result is the floor of
// the exact sum of all spans, so "1.9ns" is 1ns and "0.6ns0.6ns" (1.2ns) is
// also 1ns. The exact sum must not exceed math.MaxUint64 nanoseconds
// (18446744073709551615ns): text whose spans add up past it, even by a
// fraction of a nanosecond ("18446744073709551615ns0.5ns"), however it is
// written, is an error wrapping ErrInvalidDuration, never a wrapped or
// saturated value. The cost is linear in the length of the text; it
// allocates only when two or more spans have fractions and the longest of
// them runs past 64 significant digits, and then once.
func ParseDuration(text string) (uint64, error) {
	if text == "" {
		return 0, newLiteralError(ErrInvalidDuration, text, "empty duration; write a number and a unit such as 250ms")
	}
	if text[0] == '-' {
		return 0, newLiteralError(ErrInvalidDuration, text, "a duration cannot be negative")
	}
	if text == "0" {
		return 0, nil
	}
	// total is the sum of the spans' whole nanoseconds; the fractional
	// nanoseconds left over are kept exactly, as a decimal, and carried into
	// total as they add up to whole ones. While only one span has such a
	// remainder it stays as that span's text (first, firstUnit); a second
	// one writes both, digit by digit, into sum.
	var (
		total          uint64
		first          string
		firstUnit      uint64
		firstRemainder bool
		sum            []byte
		buf            [64]byte
	)
	for rest := text; rest != ""; {
		i := 0
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		whole := rest[:i]
		var frac string
		if i < len(rest) && rest[i] == '.' {
			j := i + 1
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			frac = rest[i+1 : j]
			i = j
		}
		if whole == "" && frac == "" {
			return 0, newLiteralError(ErrInvalidDuration, text, "expected a number at "+quote(rest)+"; write spans such as 1h30m")
		}
		j := i
		for j < len(rest) && isLetter(rest[j]) {
			j++
		}
		unitText := rest[i:j]
		if unitText == "" {
			return 0, newLiteralError(ErrInvalidDuration, text, "missing unit after "+quote(rest[:i])+"; "+unitHint)
		}
		unit, ok := durationUnits[unitText]
		if !ok {
			return 0, newLiteralError(ErrInvalidDuration, text, "unknown unit "+quote(unitText)+"; "+unitHint)
		}
		rest = rest[j:]

		span, ok := wholeNanos(whole, unit)
		if !ok {
			return 0, overflowDuration(text)
		}
		// Trailing zeros add nothing to the value or to its remainder.
		frac = trimTrailingZeros(frac)
		var fracNanos, carry uint64
		switch {
		case frac == "":
		case first == "":
			fracNanos, _, firstRemainder = fractionNanos(frac, unit, nil)
			first, firstUnit = frac, unit
		default:
			if sum == nil {
				sum = growDigits(buf[:0], len(first), len(text))
				fractionNanos(first, firstUnit, sum)
			}
			sum = growDigits(sum, len(frac), len(text))
			fracNanos, carry, _ = fractionNanos(frac, unit, sum)
		}
		var c1, c2, c3 uint64
		total, c1 = bits.Add64(total, span, 0)
		total, c2 = bits.Add64(total, fracNanos, 0)
		total, c3 = bits.Add64(total, carry, 0)
		if c1|c2|c3 != 0 {
			return 0, overflowDuration(text)
		}
	}
	// The exact sum is total plus a remainder below one nanosecond, so at
	// the limit any remainder at all is past it.
	if total == math.MaxUint64 && (firstRemainder && sum == nil || anyNonzero(sum)) {
		return 0, overflowDuration(text)
	}
	return total, nil
}

func overflowDuration(text string) error {
	return newLiteralError(ErrInvalidDuration, text, "the spans add up past 18446744073709551615ns (about 584 years); use a shorter duration")
}

// wholeNanos returns whole × unit, or false if it does not fit in a uint64.
func wholeNanos(whole string, unit uint64) (uint64, bool) {
	var w uint64
	for i := 0; i < len(whole); i++ {
		hi, lo := bits.Mul64(w, 10)
		if hi != 0 {
			return 0, false
		}
		var carry uint64
		w, carry = bits.Add64(lo, uint64(whole[i]-'0'), 0)
		if carry != 0 {
			return 0, false
		}
	}
	hi, v := bits.Mul64(w, unit)
	return v, hi == 0
}

// fractionNanos multiplies the fraction 0.frac by unit exactly. It returns
// the whole nanoseconds of the product and whether a fractional remainder
// is left. If sum is not nil, it also adds that remainder, a decimal of
// len(frac) digits, into sum (sum[i] is the digit worth 10^-(i+1);
// len(sum) ≥ len(frac)) and returns the whole nanosecond the addition
// carries out of sum, 0 or 1.
//
// The product is worked digit by digit from the last, as on paper: each
// step's low digit is a digit of the remainder and the rest carries left.
// The carry stays below unit, so 9×unit + carry < 10×Year fits easily:
// linear time, no allocation, however many digits the fraction has.
func fractionNanos(frac string, unit uint64, sum []byte) (nanos, carry uint64, remainder bool) {
	var product, added uint64
	for i := len(frac) - 1; i >= 0; i-- {
		t := uint64(frac[i]-'0')*unit + product
		product = t / 10
		d := t - 10*product
		remainder = remainder || d != 0
		if sum != nil {
			s := uint64(sum[i]) + d + added
			added = 0
			if s >= 10 {
				s -= 10
				added = 1
			}
			sum[i] = byte(s)
		}
	}
	return product, added, remainder
}

// growDigits extends sum with zero digits to at least n. Past its first
// capacity it allocates once, room for limit digits, which no fraction in
// the text exceeds.
func growDigits(sum []byte, n, limit int) []byte {
	if n <= len(sum) {
		return sum
	}
	if n > cap(sum) {
		grown := make([]byte, len(sum), max(n, limit))
		copy(grown, sum)
		sum = grown
	}
	old := len(sum)
	sum = sum[:n]
	clear(sum[old:])
	return sum
}

func trimTrailingZeros(frac string) string {
	n := len(frac)
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	return frac[:n]
}

func anyNonzero(digits []byte) bool {
	for _, d := range digits {
		if d != 0 {
			return true
		}
	}
	return false
}

// FormatDuration prints ns as canonical duration text, as people write
// durations and as Go prints them, without Go's zero spans: hours and
// minutes, then seconds with a decimal fraction ("1h30m", "1.5s",
// "1m0.25s"); under a second, milliseconds, microseconds or nanoseconds
// with a fraction ("250ms", "1.5ms", "40us", "1ns"); and "0s". ParseDuration
// reads it back to exactly ns for every uint64. The printer is package
// literal's, which wire's values print through too.
func FormatDuration(ns uint64) string { return literal.FormatDuration(ns) }

// MaxDuration is the largest duration, 18446744073709551615ns.
const MaxDuration uint64 = math.MaxUint64
