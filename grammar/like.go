package grammar

import (
	"strings"
	"unicode/utf8"
)

// MaxLikeLen is the longest LIKE pattern, in bytes: room for a name of
// MaxNameLen bytes with every character escaped.
const MaxLikeLen = 2 * MaxNameLen

// ParseLikePattern converts the unquoted text of the LIST DOMAINS LIKE
// pattern to its stored form, lower-cased as domain names are. The form is
// SQL's LIKE, as in MySQL's SHOW TABLES LIKE: '%' matches any run of
// characters (none included), '_' any one character, and a backslash makes
// the character after it literal ('\_', '\%', '\\'); every other character
// matches itself, case-insensitively. A pattern is 1…MaxLikeLen bytes of
// the characters a domain name may hold (ASCII letters, digits, '-', '_',
// '~') and '%' and '\': any other character could never match, so it is
// refused rather than silently matching nothing, and so is a backslash that
// ends the pattern. Errors wrap ErrInvalidPattern.
func ParseLikePattern(text string) (string, error) {
	switch {
	case text == "":
		return "", newLiteralError(ErrInvalidPattern, text, "the pattern is empty; give one such as 'web-%', or leave out LIKE to list every domain")
	case len(text) > MaxLikeLen:
		return "", newLiteralError(ErrInvalidPattern, text, "longer than 256 bytes; a domain name is at most 128")
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case isLetter(c) || isDigit(c) || c == '-' || c == '_' || c == '~' || c == '%':
		case c == '\\':
			if i+1 == len(text) {
				return "", newLiteralError(ErrInvalidPattern, text, "it ends in a lone '\\'; write '\\\\' to match a backslash, which no domain name holds")
			}
			i++
			if e := text[i]; !isLetter(e) && !isDigit(e) && e != '-' && e != '_' && e != '~' && e != '%' && e != '\\' {
				r, _ := utf8.DecodeRuneInString(text[i:])
				return "", newLiteralError(ErrInvalidPattern, text, "character "+quote(string(r))+" after '\\' is never in a domain name; escape only '_', '%' and '\\'")
			}
		case c == '.':
			return "", newLiteralError(ErrInvalidPattern, text, "'.' is never in a domain name; LIKE matches any one character with '_' and any run with '%'")
		default:
			r, _ := utf8.DecodeRuneInString(text[i:])
			return "", newLiteralError(ErrInvalidPattern, text, "character "+quote(string(r))+" is never in a domain name; use ASCII letters, digits, '-', '_', '~', and '%' for any run")
		}
	}
	return lowerASCII(text), nil
}

// FormatLikePattern prints a stored pattern as an NSPL string literal.
func FormatLikePattern(pattern string) string { return FormatPath(pattern) }

// MatchLike reports whether name matches pattern, a stored pattern
// (ParseLikePattern), in SQL LIKE's sense. Both are compared byte by byte,
// so a name must be lower-case to match as ParseLikePattern intends. It
// takes time proportional to len(pattern) × len(name) at most and
// allocates nothing.
func MatchLike(pattern, name string) bool {
	p, n := 0, 0
	// star is the pattern position after the last '%' and starN the name
	// position it is trying to match from; -1 while no '%' was seen.
	star, starN := -1, 0
	for n < len(name) {
		if p < len(pattern) {
			switch c := pattern[p]; {
			case c == '%':
				star, starN = p+1, n
				p++
				continue
			case c == '_':
				p++
				n++
				continue
			case c == '\\' && p+1 < len(pattern):
				if pattern[p+1] == name[n] {
					p += 2
					n++
					continue
				}
			case c == name[n]:
				p++
				n++
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last '%' take one more character and try again.
		starN++
		p, n = star, starN
	}
	for p < len(pattern) && pattern[p] == '%' {
		p++
	}
	return p == len(pattern)
}

// LikePrefix returns the literal text every name the pattern matches begins
// with: the pattern up to its first wildcard, unescaped.
func LikePrefix(pattern string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '%', '_':
			return b.String()
		case '\\':
			i++
			if i < len(pattern) {
				b.WriteByte(pattern[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
