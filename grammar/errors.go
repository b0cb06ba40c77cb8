package grammar

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sentinel errors. Every error the package returns wraps exactly one of
// them, so callers can classify it with errors.Is. Each carries the stable
// code it crosses the wire under (ErrorCode, package wire's Coded), so a
// remote failure under that code matches it too.
var (
	// ErrSyntax reports text that is not a statement of the language:
	// an unexpected token, an unterminated string or comment, a stray
	// character.
	ErrSyntax = newSentinel("syntax", "syntax error")
	// ErrInvalidDuration reports duration text that is malformed or whose
	// spans add up past 18446744073709551615ns.
	ErrInvalidDuration = newSentinel("invalid_duration", "invalid duration")
	// ErrInvalidTimestamp reports text that is not RFC 3339 or that lies
	// outside signed Unix nanoseconds.
	ErrInvalidTimestamp = newSentinel("invalid_timestamp", "invalid timestamp")
	// ErrInvalidRate reports a TIME RATE that is not a positive finite
	// float64.
	ErrInvalidRate = newSentinel("invalid_rate", "invalid time rate")
	// ErrInvalidName reports a domain name that is empty, too long, or
	// holds a character outside ASCII letters, digits, '-', '_' and '~'.
	ErrInvalidName = newSentinel("invalid_name", "invalid domain name")
	// ErrInvalidPath reports a backup path literal that is empty or holds
	// a NUL byte.
	ErrInvalidPath = newSentinel("invalid_path", "invalid backup path")
	// ErrInvalidPattern reports a LIKE pattern that is empty, too long,
	// holds a character no domain name holds, or ends in a lone '\'.
	ErrInvalidPattern = newSentinel("invalid_pattern", "invalid LIKE pattern")
)

// sentinel is a sentinel error of this package with its wire code. It is
// package wire's coded sentinel written again, because grammar imports
// nothing of this module: its one method is all wire needs.
type sentinel struct{ code, msg string }

func newSentinel(code, msg string) error { return &sentinel{code: code, msg: msg} }

// Error returns the sentinel's message.
func (s *sentinel) Error() string { return s.msg }

// ErrorCode returns the code the sentinel crosses the wire under.
func (s *sentinel) ErrorCode() string { return s.code }

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error {
	return []error{ErrSyntax, ErrInvalidDuration, ErrInvalidTimestamp, ErrInvalidRate, ErrInvalidName, ErrInvalidPath, ErrInvalidPattern}
}

// Error is an error at a place in the source text. Its message reads
// "LINE:COL: message"; Kind is the sentinel it wraps (one of this package's,
// or a sentinel of a later stage such as the planner that reports through
// the same type so every consumer prints positions alike).
type Error struct {
	Pos  Position
	Msg  string
	Kind error
}

// Error returns "LINE:COL: message".
func (e *Error) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Column, e.Msg)
}

// Unwrap returns the sentinel that classifies e.
func (e *Error) Unwrap() error { return e.Kind }

// literalError is the position-less error of the Parse* literal converters.
// Its message reads "<kind> '<text>': <reason>", or "<what> '<text>':
// <reason>" when what names the literal instead of its kind.
type literalError struct {
	kind   error
	what   string
	text   string
	reason string
}

func (e *literalError) Error() string {
	if e.what != "" {
		return e.what + " " + quote(e.text) + ": " + e.reason
	}
	return e.kind.Error() + " " + quote(e.text) + ": " + e.reason
}

func (e *literalError) Unwrap() error { return e.kind }

func newLiteralError(kind error, text, reason string) error {
	return &literalError{kind: kind, text: text, reason: reason}
}

// maxQuoted bounds how much offending text an error message repeats.
const maxQuoted = 80

// quote renders s in single quotes the way NSPL writes strings, escaping
// control characters and invalid UTF-8 and shortening very long text, so an
// error message always stays one readable line.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	n := 0
	for i := 0; i < len(s); {
		if n == maxQuoted {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'':
			b.WriteString(`''`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
		n++
	}
	b.WriteByte('\'')
	return b.String()
}
