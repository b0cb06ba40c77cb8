package main

import (
	"strings"

	"github.com/nspl-dev/nspl/internal/complete"
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
type candidateKind = complete.Kind

// candidate is one word that may replace the word being typed.
type candidate struct {
	text string
	kind candidateKind
}

// candidates returns the full words that may replace the word being typed at
// the end of prefix, and that word (complete.Candidates, with the
// completer's domain names).
func (c statementCompleter) candidates(prefix string) (words []candidate, partial string) {
	found, partial := complete.Candidates(prefix, c.domains)
	for _, w := range found {
		words = append(words, candidate{text: w.Text, kind: w.Kind})
	}
	return words, partial
}

// storedName reports whether name is a domain name in its stored form
// (complete.StoredName).
func storedName(name string) bool { return complete.StoredName(name) }

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
