package main

import (
	"fmt"
	"strconv"
	"strings"
)

// A mutation is one change to the product that breaks the behaviour of
// the rows it names: the text from, found exactly once in file, becomes
// to.
type mutation struct {
	source string // the list file and line the entry starts on
	rows   []string
	file   string
	from   string
	to     string
	what   string
}

func (m *mutation) String() string {
	return fmt.Sprintf("%s [%s] %s: %s", m.source, strings.Join(m.rows, " "), m.file, m.what)
}

// parseList reads one mutation list: blocks separated by blank lines,
// each a set of "key: value" lines; a line starting with # is a comment.
// from and to may be Go-quoted strings, for tabs, newlines, leading or
// trailing spaces and deletions.
func parseList(name, text string) ([]*mutation, error) {
	var muts []*mutation
	var cur *mutation
	seen := map[string]bool{}
	finish := func() error {
		if cur == nil {
			return nil
		}
		for _, k := range []string{"row", "file", "from", "to", "what"} {
			if !seen[k] {
				return fmt.Errorf("%s: the entry has no %q line", cur.source, k)
			}
		}
		if cur.from == cur.to {
			return fmt.Errorf("%s: from and to are the same text", cur.source)
		}
		if cur.from == "" {
			return fmt.Errorf("%s: from is empty: name the text the mutation replaces", cur.source)
		}
		muts = append(muts, cur)
		cur, seen = nil, map[string]bool{}
		return nil
	}
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if trimmed == "" {
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected \"key: value\", found %q", name, n, line)
		}
		key = strings.TrimSpace(key)
		value = strings.TrimPrefix(value, " ")
		if cur == nil {
			cur = &mutation{source: fmt.Sprintf("%s:%d", name, n)}
		}
		if seen[key] {
			return nil, fmt.Errorf("%s:%d: a second %q line in one entry (separate entries with a blank line)", name, n, key)
		}
		seen[key] = true
		switch key {
		case "row":
			cur.rows = strings.Fields(value)
			if len(cur.rows) == 0 {
				return nil, fmt.Errorf("%s:%d: row names no row", name, n)
			}
			for _, r := range cur.rows {
				if !rowID.MatchString(r) {
					return nil, fmt.Errorf("%s:%d: %q is not a row id such as T11 or C57", name, n, r)
				}
			}
		case "file":
			cur.file = strings.TrimSpace(value)
			if cur.file == "" || strings.HasPrefix(cur.file, "/") || strings.Contains(cur.file, "..") || !strings.HasSuffix(cur.file, ".go") || strings.HasSuffix(cur.file, "_test.go") {
				return nil, fmt.Errorf("%s:%d: file must be a product .go file relative to the module root, not a test, found %q", name, n, cur.file)
			}
		case "from", "to":
			text, err := unquote(value)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", name, n, key, err)
			}
			if key == "from" {
				cur.from = text
			} else {
				cur.to = text
			}
		case "what":
			cur.what = strings.TrimSpace(value)
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q (row, file, from, to, what)", name, n, key)
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return muts, nil
}

// unquote takes a value as written, or as a Go string literal when it
// starts with a double quote.
func unquote(v string) (string, error) {
	if strings.HasPrefix(v, `"`) {
		s, err := strconv.Unquote(strings.TrimRight(v, " \t"))
		if err != nil {
			return "", fmt.Errorf("not a Go string literal: %s", v)
		}
		return s, nil
	}
	return v, nil
}

// apply returns src with the mutation made, or an error when its from
// text is not found exactly once.
func (m *mutation) apply(src string) (string, error) {
	switch n := strings.Count(src, m.from); n {
	case 1:
		return strings.Replace(src, m.from, m.to, 1), nil
	case 0:
		return "", fmt.Errorf("%s: %q is not in %s: the product changed, write the mutation again", m.source, m.from, m.file)
	default:
		return "", fmt.Errorf("%s: %q occurs %d times in %s: quote more of the line so it names one place", m.source, m.from, n, m.file)
	}
}
