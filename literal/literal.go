// Package literal prints the values of NSPL as the language writes them:
// domain names (bare, or backtick-quoted when they are a keyword or need
// quoting), durations, RFC 3339 timestamps and rates. It holds the
// language's reserved keywords too, since a name's spelling depends on them.
//
// It sits below grammar, which reads these texts back and documents each
// round trip, and below wire, whose values and frames print through it, so
// the shell, the embedded API and the wire vocabulary share one printer.
// It imports no package of this module.
package literal

import (
	"strconv"
	"strings"
	"time"
)

// Nanoseconds in the duration units FormatDuration prints.
const (
	Nanosecond  uint64 = 1
	Microsecond        = 1000 * Nanosecond
	Millisecond        = 1000 * Microsecond
	Second             = 1000 * Millisecond
	Minute             = 60 * Second
	Hour               = 60 * Minute
)

// keywords lists every keyword of the language in its canonical upper-case
// spelling. Keywords are reserved: a domain whose name is spelled like one
// is written in backticks (`clock`), and FormatName does that. A new
// statement adds its words here and its rule in grammar's parser.go.
var keywords = []string{
	"ALL", "ALTER", "AS", "AT", "ATTACH",
	"BACKUP", "BEGIN",
	"CLOCK", "CLUSTER", "COLOCATION", "COMMIT", "CORDON", "CREATE",
	"DESCRIBE", "DETACH", "DOMAIN", "DOMAINS", "DRAIN", "DROP", "DRY",
	"EXISTS",
	"FROM",
	"IF",
	"LIKE", "LIST",
	"NEUTRAL", "NODE", "NOT", "NOW",
	"PACED", "PERIOD", "PLACEMENT", "PREFER",
	"RATE", "REQUIRE", "RESTORE", "RESUME", "REVERT", "ROLLBACK", "RUN",
	"SEPARATION", "SET", "SHOW", "SKEW", "START", "STATUS", "STOP", "SUGGEST",
	"TIME", "TO", "TRANSACTION", "TRANSACTIONS",
	"UNCORDON", "UNPACED", "USE",
	"WITH",
}

// keywordsByLen buckets keywords by length so that recognising a word costs
// a handful of case-insensitive comparisons and no allocation.
var keywordsByLen = func() [][]string {
	longest := 0
	for _, k := range keywords {
		longest = max(longest, len(k))
	}
	out := make([][]string, longest+1)
	for _, k := range keywords {
		out[len(k)] = append(out[len(k)], k)
	}
	return out
}()

// LookupKeyword returns the canonical spelling of word if it is a keyword
// in any letter case.
func LookupKeyword(word string) (string, bool) {
	if len(word) >= len(keywordsByLen) {
		return "", false
	}
	for _, k := range keywordsByLen[len(word)] {
		if strings.EqualFold(word, k) {
			return k, true
		}
	}
	return "", false
}

// Keywords returns every reserved keyword, upper-case and sorted.
func Keywords() []string {
	return append([]string(nil), keywords...)
}

// FormatName prints a stored domain name as NSPL: bare when it is a word
// that is not a keyword, backtick-quoted otherwise (`prod-1`, `clock`).
func FormatName(name string) string {
	bare := name != "" && !isDigit(name[0])
	if bare {
		_, kw := LookupKeyword(name)
		bare = !kw
	}
	for i := 0; bare && i < len(name); i++ {
		c := name[i]
		bare = (c >= 'a' && c <= 'z') || isDigit(c) || c == '_'
	}
	if bare {
		return name
	}
	return "`" + name + "`"
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// FormatTimestamp prints Unix nanoseconds as RFC 3339 in UTC with trailing
// fractional zeros trimmed ("2026-01-01T00:00:00Z",
// "2026-01-01T00:00:00.5Z").
func FormatTimestamp(unixNanos int64) string {
	return time.Unix(0, unixNanos).UTC().Format(time.RFC3339Nano)
}

// FormatRate prints a rate with the fewest digits that read back to the
// same float64 ("1", "60", "0.5", "5e-324", "1.7976931348623157e+308").
func FormatRate(rate float64) string {
	return strconv.FormatFloat(rate, 'g', -1, 64)
}

// FormatDuration prints ns as canonical duration text, as people write
// durations and as Go prints them, without Go's zero spans: hours and
// minutes, then seconds with a decimal fraction ("1h30m", "1.5s",
// "1m0.25s"); under a second, milliseconds, microseconds or nanoseconds
// with a fraction ("250ms", "1.5ms", "40us", "1ns"); and "0s".
func FormatDuration(ns uint64) string {
	if ns == 0 {
		return "0s"
	}
	var buf [64]byte
	b := buf[:0]
	switch {
	case ns >= Second:
		if h := ns / Hour; h > 0 {
			b = strconv.AppendUint(b, h, 10)
			b = append(b, 'h')
			ns -= h * Hour
		}
		if m := ns / Minute; m > 0 {
			b = strconv.AppendUint(b, m, 10)
			b = append(b, 'm')
			ns -= m * Minute
		}
		if ns > 0 {
			b = appendDecimal(b, ns, Second, 9)
			b = append(b, 's')
		}
	case ns >= Millisecond:
		b = append(appendDecimal(b, ns, Millisecond, 6), "ms"...)
	case ns >= Microsecond:
		b = append(appendDecimal(b, ns, Microsecond, 3), "us"...)
	default:
		b = append(strconv.AppendUint(b, ns, 10), "ns"...)
	}
	return string(b)
}

// appendDecimal appends v/unit as a decimal number: its whole part and,
// when v is no whole number of units, a point and the digits of the rest
// (unit is 10^digits), trailing zeros dropped.
func appendDecimal(b []byte, v, unit uint64, digits int) []byte {
	b = strconv.AppendUint(b, v/unit, 10)
	rest := v % unit
	if rest == 0 {
		return b
	}
	var frac [9]byte
	for i := digits - 1; i >= 0; i-- {
		frac[i] = byte('0' + rest%10)
		rest /= 10
	}
	n := digits
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, frac[:n]...)
}
