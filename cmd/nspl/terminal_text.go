package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// termSafe returns s with everything a terminal would act on, rather than
// show, written as a visible escape, so text nspl did not write itself (a
// server's replies, error messages and node names, an archive's manifest
// fields, a domain name a node sends) cannot retitle the window, clear the
// screen, move the cursor or forge a line of output:
//
//   - C0 controls and DEL as \a \b \f \n \r \v, or \xNN (ESC is \x1b), tab
//     excepted, which only moves to the next column;
//   - C1 controls (U+0080 to U+009F; U+009B is a one-rune CSI) as \u0080;
//   - the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to
//     U+2069), which reorder what follows them on the line, as \u202e;
//   - each byte of invalid UTF-8 as \xNN.
//
// Everything else, backslashes included, is kept as it is, and text with
// none of these comes back unchanged without allocating. The CLI applies
// termSafe once on each path text takes to the terminal: renderReply for
// replies, diagnostic.write for statement errors, the clock event lines,
// notices, the prompt and the final error of a run. JSON output needs none
// of it: its encoder writes every control character as \u00NN.
func termSafe(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' {
			i++
			continue
		}
		if c < 0x80 {
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			i++
			switch {
			case c >= 0x20 && c < 0x7f || c == '\t':
				b.WriteByte(c)
			case c == '\a':
				b.WriteString(`\a`)
			case c == '\b':
				b.WriteString(`\b`)
			case c == '\f':
				b.WriteString(`\f`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\v':
				b.WriteString(`\v`)
			default:
				writeHexByte(&b, c)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			writeHexByte(&b, c)
		case unsafeRune(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether r, a valid rune at or above U+0080, is one
// termSafe escapes: a C1 control or a bidirectional override or isolate.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func writeHexByte(b *strings.Builder, c byte) {
	const hex = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&0xf])
}

// termSafeLines is termSafe keeping line feeds, for a CSV field: RFC 4180
// quotes a field holding one, so the break cannot pass for a record of
// nspl's own.
func termSafeLines(s string) string {
	if !strings.Contains(s, "\n") {
		return termSafe(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termSafe(l)
	}
	return strings.Join(lines, "\n")
}
