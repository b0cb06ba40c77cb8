package grammar

import (
	"math"
	"math/bits"
	"strconv"
)

// Nanoseconds in each duration unit. A month is 30.44 days and a year
// 365.25 days, both whole numbers of nanoseconds.
const (
	Nanosecond  uint64 = 1
	Microsecond        = 1000 * Nanosecond
	Millisecond        = 1000 * Microsecond
	Second             = 1000 * Millisecond
	Minute             = 60 * Second
	Hour               = 60 * Minute
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
// integer arithmetic. The text is one or more spans written together, each
// a whole or fractional number and a unit ("250ms", "1h30m", "1.5s"); a bare
// "0" is zero. Each span's value is truncated toward zero to whole
// nanoseconds (as Go's time.ParseDuration does), then the spans are added.
// Text whose spans add up past math.MaxUint64 nanoseconds
// (18446744073709551615ns), however it is written, is an error wrapping
// ErrInvalidDuration, never a wrapped value.
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
	var total uint64
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
		span, ok := spanNanos(whole, frac, unit)
		if !ok {
			return 0, overflowDuration(text)
		}
		var carry uint64
		total, carry = bits.Add64(total, span, 0)
		if carry != 0 {
			return 0, overflowDuration(text)
		}
		rest = rest[j:]
	}
	return total, nil
}

func overflowDuration(text string) error {
	return newLiteralError(ErrInvalidDuration, text, "the spans add up past 18446744073709551615ns (about 584 years); use a shorter duration")
}

// spanNanos returns floor((whole + 0.frac) × unit), or false if it does not
// fit in a uint64.
func spanNanos(whole, frac string, unit uint64) (uint64, bool) {
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
	if hi != 0 {
		return 0, false
	}
	// floor(frac × unit) digit by digit from the last: floor((d + y)/10) =
	// floor((d + floor(y))/10) for a whole d and a real y ≥ 0, so carrying
	// the floor of each partial product keeps the result exact. The carry
	// stays below unit, so 9×unit + carry < 10×Year fits easily: linear time,
	// no allocation, however many digits the fraction has.
	var f uint64
	for i := len(frac) - 1; i >= 0; i-- {
		f = (uint64(frac[i]-'0')*unit + f) / 10
	}
	var carry uint64
	v, carry = bits.Add64(v, f, 0)
	return v, carry == 0
}

// FormatDuration prints ns as canonical duration text: its hours, minutes,
// seconds, milliseconds, microseconds and nanoseconds, largest first, zero
// spans left out ("1h30m", "1s500ms", "0s"). ParseDuration reads it back to
// exactly ns for every uint64.
func FormatDuration(ns uint64) string {
	if ns == 0 {
		return "0s"
	}
	var buf [64]byte
	b := buf[:0]
	for _, u := range [...]struct {
		n    uint64
		name string
	}{{Hour, "h"}, {Minute, "m"}, {Second, "s"}, {Millisecond, "ms"}, {Microsecond, "us"}, {Nanosecond, "ns"}} {
		if q := ns / u.n; q > 0 {
			b = strconv.AppendUint(b, q, 10)
			b = append(b, u.name...)
			ns -= q * u.n
		}
	}
	return string(b)
}

// MaxDuration is the largest duration, 18446744073709551615ns.
const MaxDuration uint64 = math.MaxUint64
