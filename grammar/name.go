package grammar

import (
	"strings"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/literal"
)

// MaxNameLen is the longest domain name, in bytes.
const MaxNameLen = 128

// ParseName converts the source text of a domain name, a bare word or a
// backtick-quoted name, to the stored form: lower-cased, 1…128 bytes of
// ASCII letters, digits, '-', '_' and '~'. Errors wrap ErrInvalidName; a '.'
// gets its own message because domain names are never qualified.
func ParseName(text string) (string, error) {
	name := text
	if len(name) >= 2 && name[0] == '`' && name[len(name)-1] == '`' {
		name = name[1 : len(name)-1]
	}
	if err := checkName(text, name); err != nil {
		return "", err
	}
	return lowerASCII(name), nil
}

func checkName(text, name string) error {
	switch {
	case name == "":
		return newLiteralError(ErrInvalidName, text, "a domain name cannot be empty")
	case len(name) > MaxNameLen:
		return newLiteralError(ErrInvalidName, text, "longer than 128 bytes; choose a shorter name")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isLetter(c) || isDigit(c) || c == '-' || c == '_' || c == '~':
		case c == '.':
			return newLiteralError(ErrInvalidName, text, "a domain name cannot contain '.'; use '-' or '_' instead")
		default:
			r, _ := utf8.DecodeRuneInString(name[i:])
			return newLiteralError(ErrInvalidName, text, "character "+quote(string(r))+" is not allowed; use ASCII letters, digits, '-', '_' and '~'")
		}
	}
	return nil
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// FormatName prints a stored domain name as NSPL: bare when it is a word
// that is not a keyword, backtick-quoted otherwise (`prod-1`, `clock`).
func FormatName(name string) string { return literal.FormatName(name) }

// MaxNodeNameLen is the longest node name: a node name is a DNS label.
const MaxNodeNameLen = 63

// ParseNodeName returns the node name text spells: an identifier as
// written, or the inside of a backquoted name or string literal. A node
// name is 1 to 63 ASCII letters, digits and '-', neither first nor last,
// and its case is kept.
func ParseNodeName(text string) (string, error) {
	name := text
	if len(name) >= 2 && (name[0] == '`' && name[len(name)-1] == '`' || name[0] == '\'' && name[len(name)-1] == '\'') {
		name = name[1 : len(name)-1]
	}
	switch {
	case name == "":
		return "", invalidNodeName(text, "a node name cannot be empty")
	case len(name) > MaxNodeNameLen:
		return "", invalidNodeName(text, "a node name is at most 63 bytes; SHOW CLUSTER STATUS lists the node names")
	case name[0] == '-' || name[len(name)-1] == '-':
		return "", invalidNodeName(text, "a node name cannot start or end with '-'")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !isDigit(c) && c != '-' {
			return "", invalidNodeName(text, "a node name holds only ASCII letters, digits and '-'; SHOW CLUSTER STATUS lists the node names")
		}
	}
	return name, nil
}

// FormatNodeName returns name as NSPL source: bare when it reads back as
// itself, else in backquotes.
func FormatNodeName(name string) string {
	bare := name != "" && !isDigit(name[0]) && !IsKeyword(name)
	for i := 0; bare && i < len(name); i++ {
		c := name[i]
		bare = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c)
	}
	if bare {
		return name
	}
	return "`" + name + "`"
}

func invalidNodeName(text, reason string) error {
	return &literalError{kind: ErrInvalidName, what: "invalid node name", text: text, reason: reason}
}
