package grammar

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/nspl-dev/nspl/literal"
)

const rateHint = "; write a positive number from 5e-324 to 1.7976931348623157e308, such as 60 or 0.5"

// ParseRate converts TIME RATE text to a float64. It accepts every positive
// finite float64, subnormals included, written as a decimal number with an
// optional fraction and exponent ("60", "0.5", "5e-324",
// "1.7976931348623157E+308"); the value is the nearest float64, as
// strconv.ParseFloat rounds. Zero, negative values, text that rounds to zero
// or overflows to infinity ("1e309"), NaN, infinities and anything else are
// errors wrapping ErrInvalidRate that quote the text.
func ParseRate(text string) (float64, error) {
	bad := func(reason string) (float64, error) {
		return 0, newLiteralError(ErrInvalidRate, text, reason)
	}
	body := text
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		return bad("not a number" + rateHint)
	case "inf", "infinity":
		return bad("infinite" + rateHint)
	}
	if !isDecimal(body) {
		return bad("not a decimal number" + rateHint)
	}
	v, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange) && math.IsInf(v, 0):
		return bad("overflows float64" + rateHint)
	case err != nil:
		return bad("not a decimal number" + rateHint)
	case v < 0 || (v == 0 && text[0] == '-'):
		return bad("must be positive" + rateHint)
	case v == 0 && strings.Trim(mantissa(body), "0.") == "":
		return bad("must be positive, not zero" + rateHint)
	case v == 0:
		return bad("underflows to zero" + rateHint)
	}
	return v, nil
}

// mantissa returns s without its exponent.
func mantissa(s string) string {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return s[:i]
	}
	return s
}

// isDecimal reports whether s is digits with an optional fraction and
// exponent, with at least one mantissa digit.
func isDecimal(s string) bool {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// FormatRate prints a rate with the fewest digits that read back to the
// same float64 ("1", "60", "0.5", "5e-324", "1.7976931348623157e+308").
func FormatRate(rate float64) string { return literal.FormatRate(rate) }
