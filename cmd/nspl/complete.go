package main

import (
	"sort"
	"strings"
	"unicode"

	"github.com/nspl-dev/nspl/grammar"
)

// statementCompleter completes keywords from the grammar's position and
// domain names from the catalog. The shell's Tab and nspl --suggest (and so
// the completion scripts) both use it. pending returns the lines of the statement
// already entered before the current line, so completion on a continuation
// line knows where in the statement it is.
type statementCompleter struct {
	pending func() string
	domains func() []string
}

// candidateKind says what a completion candidate is.
type candidateKind string

const (
	kindKeyword candidateKind = "keyword"
	kindDomain  candidateKind = "domain"
)

// candidate is one word that may replace the word being typed.
type candidate struct {
	text string
	kind candidateKind
}

// candidates returns the full words that may replace the word being typed at
// the end of prefix, and that word. Only the domain names storedName
// accepts are offered. A domain name is offered bare when it
// can be (prod) and backtick-quoted otherwise (`prod-1`), and always quoted
// when the word being typed opens a backtick.
func (c statementCompleter) candidates(prefix string) (words []candidate, partial string) {
	s := grammar.Suggest(prefix)
	lower := s.Partial != "" && isLower(s.Partial)
	for _, k := range s.Keywords {
		if lower {
			k = strings.ToLower(k)
		}
		words = append(words, candidate{text: k, kind: kindKeyword})
	}
	if s.DomainName && c.domains != nil {
		quoted := strings.HasPrefix(s.Partial, "`")
		p := strings.ToLower(strings.TrimPrefix(s.Partial, "`"))
		var names []string
		for _, name := range c.domains() {
			if !storedName(name) {
				continue
			}
			if strings.HasPrefix(name, p) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			text := grammar.FormatName(name)
			if quoted && !strings.HasPrefix(text, "`") {
				text = "`" + name + "`"
			}
			words = append(words, candidate{text: text, kind: kindDomain})
		}
	}
	return words, s.Partial
}

// storedName reports whether name, as a node sends it, is a domain name in
// its stored form: grammar's name rule (1 to 128 ASCII letters, digits, '-',
// '_' and '~'), already lower-case. Names are data: one that is not is
// dropped before it is printed, completed or suggested, so a node cannot
// make the shell or a completion script offer text such as $(touch x).
func storedName(name string) bool {
	stored, err := grammar.ParseName(name)
	return err == nil && stored == name
}

// Do implements the editor's completion: the suffixes that complete the word
// before the cursor, each followed by a space.
func (c statementCompleter) Do(line []rune, pos int) ([][]rune, int) {
	if pos < 0 || pos > len(line) {
		return nil, 0
	}
	prefix := string(line[:pos])
	if c.pending != nil {
		if p := c.pending(); p != "" {
			prefix = p + "\n" + prefix
		}
	}
	words, partial := c.candidates(prefix)
	n := len([]rune(partial))
	var out [][]rune
	for _, w := range words {
		wr := []rune(w.text)
		if len(wr) < n || !strings.EqualFold(string(wr[:n]), partial) {
			continue
		}
		out = append(out, append(wr[n:], ' '))
	}
	return out, n
}

func isLower(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return false
		}
	}
	return true
}
