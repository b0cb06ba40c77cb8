package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/grammar"
)

// ErrUndefinedVariable is the failure of a statement naming a :variable
// that no \set or -v defined.
var ErrUndefinedVariable = errors.New("undefined variable")

// undefinedVariableError says which variable a statement used unset, and
// where in the statement's text.
type undefinedVariableError struct {
	Name   string
	Offset int // the ':' in the statement's text
}

func (e *undefinedVariableError) Error() string {
	return fmt.Sprintf("variable %q is not set; set it with \\set %s VALUE or nspl -v %s=VALUE", e.Name, e.Name, e.Name)
}

func (e *undefinedVariableError) Unwrap() error { return ErrUndefinedVariable }

// validVariableName reports whether name may be a variable: a letter or
// '_', then letters, digits and '_', as psql's :NAME reads it.
func validVariableName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// substitution is one :NAME replaced in a statement: its span in the
// original text and in the substituted one.
type substitution struct {
	orig, origLen int
	subst, length int
}

// substituteVariables replaces psql's :NAME by the variable's value and
// :'NAME' by the value as a single-quoted literal (a ' doubled), outside
// string literals, quoted names and comments. "::" is left alone, as is a
// ':' not followed by a name. A :NAME that is not set fails with an
// *undefinedVariableError. Text without a ':' comes back unchanged.
func substituteVariables(text string, vars map[string]string) (string, []substitution, error) {
	if !strings.Contains(text, ":") {
		return text, nil, nil
	}
	var b strings.Builder
	var subs []substitution
	last := 0 // text[last:i] is still to copy
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '`':
			end := strings.IndexByte(text[i+1:], c)
			if end < 0 {
				i = len(text)
			} else {
				i += end + 1
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 3
			}
		case (c == '-' || c == '/') && i+1 < len(text) && text[i+1] == c:
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				i = len(text)
			} else {
				i += end
			}
		case c == ':' && i+1 < len(text) && text[i+1] == ':':
			i++
		case c == ':':
			quoted := i+1 < len(text) && text[i+1] == '\''
			start := i + 1
			if quoted {
				start++
			}
			end := start
			for end < len(text) && validVariableName(text[start:end+1]) {
				end++
			}
			if end == start || quoted && (end >= len(text) || text[end] != '\'') {
				continue // not a variable: a lone ':' or an unclosed :'
			}
			name := text[start:end]
			if quoted {
				end++ // the closing '
			}
			v, ok := vars[name]
			if !ok {
				return "", nil, &undefinedVariableError{Name: name, Offset: i}
			}
			if quoted {
				v = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			}
			b.WriteString(text[last:i])
			subs = append(subs, substitution{orig: i, origLen: end - i, subst: b.Len(), length: len(v)})
			b.WriteString(v)
			last = end
			i = end - 1
		}
	}
	if subs == nil {
		return text, nil, nil
	}
	b.WriteString(text[last:])
	return b.String(), subs, nil
}

// originalOffset maps an offset in a substituted text back to the text
// before substitution: an offset inside a value maps to its :NAME.
func originalOffset(subs []substitution, off int) int {
	delta := 0
	for _, s := range subs {
		if off < s.subst {
			break
		}
		if off < s.subst+s.length {
			return s.orig
		}
		delta = s.orig + s.origLen - (s.subst + s.length)
	}
	return off + delta
}

// positionIn is the position of byte off in text, counted from 1:1.
func positionIn(text string, off int) grammar.Position {
	off = min(max(off, 0), len(text))
	p := grammar.Position{Offset: off, Line: 1 + strings.Count(text[:off], "\n")}
	lineStart := strings.LastIndexByte(text[:off], '\n') + 1
	p.Column = 1 + utf8.RuneCountInString(text[lineStart:off])
	return p
}

// parseVariableAssignment reads -v's NAME=VALUE.
func parseVariableAssignment(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("-v %q: write NAME=VALUE", s)
	}
	if !validVariableName(name) {
		return "", "", fmt.Errorf("-v %q: a variable name is a letter or '_', then letters, digits and '_'", s)
	}
	return name, value, nil
}

// variableList is the flag.Value behind -v: each NAME=VALUE sets one
// variable, a later one winning.
type variableList struct{ vars *map[string]string }

func (l variableList) Set(s string) error {
	name, value, err := parseVariableAssignment(s)
	if err != nil {
		return err
	}
	if *l.vars == nil {
		*l.vars = map[string]string{}
	}
	(*l.vars)[name] = value
	return nil
}

func (l variableList) String() string { return "" }

// listVariables is \set's listing: NAME = 'VALUE' lines in name order.
func listVariables(vars map[string]string) string {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s = '%s'\n", n, termSafe(vars[n]))
	}
	return b.String()
}
