package grammar

import (
	"math"

	"github.com/nspl-dev/nspl/literal"
)

// Inclusive range of timestamps: exactly the signed Unix nanoseconds.
const (
	MinTimestampText = "1677-09-21T00:12:43.145224192Z"
	MaxTimestampText = "2262-04-11T23:47:16.854775807Z"
)

const timestampHint = "; write RFC 3339 such as '2026-01-01T00:00:00Z'"

// ParseTimestamp converts RFC 3339 text (YYYY-MM-DDTHH:MM:SS[.frac] then Z
// or ±HH:MM; 'T' and 'Z' in either case) to signed Unix nanoseconds (UTC).
// It does not use time.Parse, which rejects leap seconds, and never goes
// through time.Time.UnixNano, which wraps outside the int64 range:
//
//   - an offset is converted to UTC;
//   - fractional digits past the ninth are truncated;
//   - a leap second ":60" reads as one second past the ":59" second before
//     it, because Unix nanoseconds have no leap seconds (it is accepted at
//     any minute, since the offset decides where a UTC leap second falls);
//   - the inclusive range is 1677-09-21T00:12:43.145224192Z through
//     2262-04-11T23:47:16.854775807Z; anything outside is an error wrapping
//     ErrInvalidTimestamp, as is any malformed text.
func ParseTimestamp(text string) (int64, error) {
	bad := func(reason string) (int64, error) {
		return 0, newLiteralError(ErrInvalidTimestamp, text, reason)
	}
	s := text
	if len(s) < len("2006-01-02T15:04:05Z") {
		return bad("too short for RFC 3339" + timestampHint)
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if !isDigit(c) {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	second, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || s[4] != '-' || s[7] != '-' ||
		(s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return bad("not in the form YYYY-MM-DDTHH:MM:SS" + timestampHint)
	}
	switch {
	case month < 1 || month > 12:
		return bad("month out of range 01…12")
	case day < 1 || day > daysIn(year, month):
		return bad("day out of range for the month")
	case hour > 23:
		return bad("hour out of range 00…23")
	case minute > 59:
		return bad("minute out of range 00…59")
	case second > 60:
		return bad("second out of range 00…60")
	}
	rest := s[19:]
	var frac int64
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			if i <= 9 {
				frac = frac*10 + int64(rest[i]-'0')
			}
			i++
		}
		if i == 1 {
			return bad("a '.' must be followed by fraction digits")
		}
		for d := i; d <= 9; d++ {
			frac *= 10
		}
		rest = rest[i:]
	}
	var offset int64
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := num(len(s)-5, 2)
		om, ok2 := num(len(s)-2, 2)
		if !ok1 || !ok2 {
			return bad("malformed offset; write Z or ±HH:MM")
		}
		if oh > 23 || om > 59 {
			return bad("offset out of range; write Z or ±HH:MM up to ±23:59")
		}
		offset = int64(oh*3600 + om*60)
		if rest[0] == '-' {
			offset = -offset
		}
	case rest == "":
		return bad("missing time zone; end with Z or ±HH:MM")
	default:
		return bad("malformed time zone " + quote(rest) + "; end with Z or ±HH:MM")
	}
	// Seconds since the epoch, in UTC. Years 0000…9999 keep this far from
	// overflowing int64.
	sec := daysFromCivil(int64(year), month, day)*86400 +
		int64(hour*3600+minute*60+second) - offset
	ns, ok := unixNanos(sec, frac)
	if !ok {
		return bad("outside the signed Unix-nanosecond range " + MinTimestampText + " … " + MaxTimestampText)
	}
	return ns, nil
}

// unixNanos returns sec×10⁹+frac (0 ≤ frac < 10⁹) if it fits in an int64.
func unixNanos(sec, frac int64) (int64, bool) {
	const (
		billion = int64(1_000_000_000)
		minSec  = math.MinInt64/billion - 1 // -9223372037
		minFrac = 145224192                 // math.MinInt64 − minSec×10⁹
		maxSec  = math.MaxInt64 / billion   // 9223372036
		maxFrac = math.MaxInt64 % billion
	)
	switch {
	case sec < minSec || sec > maxSec:
		return 0, false
	case sec == minSec && frac < minFrac:
		return 0, false
	case sec == maxSec && frac > maxFrac:
		return 0, false
	case sec < 0:
		// Stay in range while combining: (sec+1)×10⁹ − (10⁹ − frac).
		return (sec+1)*billion - (billion - frac), true
	default:
		return sec*billion + frac, true
	}
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(year, month int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	default:
		return 31
	}
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// FormatTimestamp prints Unix nanoseconds as RFC 3339 in UTC with trailing
// fractional zeros trimmed ("2026-01-01T00:00:00Z",
// "2026-01-01T00:00:00.5Z"). ParseTimestamp reads it back exactly for every
// int64.
func FormatTimestamp(unixNanos int64) string { return literal.FormatTimestamp(unixNanos) }
