// Package complete is the statement completer the shell's Tab, nspl
// --suggest and nspl lsp share: keywords from the grammar's position, and
// domain names from wherever the caller takes them.
package complete

import (
	"sort"
	"strings"
	"unicode"

	"github.com/nspl-dev/nspl/grammar"
)

// Kind says what a completion candidate is.
type Kind string

const (
	// Keyword is a keyword of the language.
	Keyword Kind = "keyword"
	// Domain is the name of a domain.
	Domain Kind = "domain"
)

// Candidate is one word that may replace the word being typed.
type Candidate struct {
	Text string
	Kind Kind
}

// Candidates returns the full words that may replace the word being typed
// at the end of prefix, and that word. Keywords come in the letter case of
// the word being typed (lower when it is lower-case). Domain names come
// from domains, called only where a name of an existing domain may follow,
// and only those StoredName accepts are offered: bare when they can be
// (prod), backtick-quoted otherwise (`prod-1`), and always quoted when the
// word being typed opens a backtick.
func Candidates(prefix string, domains func() []string) (words []Candidate, partial string) {
	s := grammar.Suggest(prefix)
	lower := s.Partial != "" && isLower(s.Partial)
	for _, k := range s.Keywords {
		if lower {
			k = strings.ToLower(k)
		}
		words = append(words, Candidate{Text: k, Kind: Keyword})
	}
	if s.DomainName && domains != nil {
		quoted := strings.HasPrefix(s.Partial, "`")
		p := strings.ToLower(strings.TrimPrefix(s.Partial, "`"))
		var names []string
		for _, name := range domains() {
			if !StoredName(name) {
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
			words = append(words, Candidate{Text: text, Kind: Domain})
		}
	}
	return words, s.Partial
}

// StoredName reports whether name, as a node sends it, is a domain name in
// its stored form: grammar's name rule (1 to 128 ASCII letters, digits, '-',
// '_' and '~'), already lower-case. Names are data: one that is not is
// dropped before it is printed, completed or suggested, so a node cannot
// make the shell, an editor or a completion script offer text such as
// $(touch x).
func StoredName(name string) bool {
	stored, err := grammar.ParseName(name)
	return err == nil && stored == name
}

func isLower(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return false
		}
	}
	return true
}
