package grammar

import (
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// expectation is the set of tokens the grammar accepts after a run of
// tokens. It is found by asking the parser, one candidate token at a time,
// so it can never disagree with the grammar: error messages and shell
// completion both come from here.
type expectation struct {
	keywords []string
	name     bool // a bare or backtick-quoted name
	number   bool
	duration bool
	str      bool
	path     bool // the string is a backup path, not a timestamp
	end      bool // the statement may end here
}

const probeOffset = 1 << 40

var probeTokens = []lexer.Token{
	{Type: tokIdent, Value: "x"},
	{Type: tokNumber, Value: "1"},
	{Type: tokDuration, Value: "1s"},
	{Type: tokString, Value: "'x'"},
}

// accepts reports whether the grammar accepts cand after prefix (cand nil:
// whether the statement may end after prefix).
func accepts(prefix []lexer.Token, cand *lexer.Token) bool {
	toks := make([]lexer.Token, len(prefix), len(prefix)+1)
	copy(toks, prefix)
	eof := lexer.Position{Offset: probeOffset + 1}
	if cand != nil {
		c := *cand
		c.Pos = lexer.Position{Offset: probeOffset}
		toks = append(toks, c)
	}
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks, eof: eof})
	if err != nil {
		return false
	}
	_, err = statementParser().ParseFromLexer(peek)
	if err == nil {
		return true
	}
	if cand == nil {
		return false
	}
	pos, ok := errorOffset(err)
	return ok && pos > probeOffset
}

func errorOffset(err error) (int, bool) {
	type positioned interface{ Position() lexer.Position }
	if p, ok := err.(positioned); ok {
		return p.Position().Offset, true
	}
	return 0, false
}

func expectAfter(prefix []lexer.Token) expectation {
	var e expectation
	for _, k := range keywords {
		if accepts(prefix, &lexer.Token{Type: tokKeyword, Value: k}) {
			e.keywords = append(e.keywords, k)
		}
	}
	e.name = accepts(prefix, &probeTokens[0])
	e.number = accepts(prefix, &probeTokens[1])
	e.duration = accepts(prefix, &probeTokens[2])
	e.str = accepts(prefix, &probeTokens[3])
	if n := len(prefix); e.str && n > 0 && prefix[n-1].Type == tokKeyword {
		switch prefix[n-1].Value {
		case "TO", "FROM", "BACKUP":
			e.path = true
		}
	}
	e.end = accepts(prefix, nil)
	return e
}

// describe renders e as words: "PERIOD", "DOMAIN, IF, PACED or UNPACED",
// "a domain name or ';'".
func (e expectation) describe() string {
	var parts []string
	parts = append(parts, e.keywords...)
	switch {
	case e.duration:
		parts = append(parts, "a duration such as 250ms")
	case e.number:
		parts = append(parts, "a number such as 60")
	case e.name:
		parts = append(parts, "a domain name")
	}
	switch {
	case e.path:
		parts = append(parts, "a quoted path such as '~/prod.nsplbak'")
	case e.str:
		parts = append(parts, "a quoted RFC 3339 timestamp such as '2026-01-01T00:00:00Z'")
	}
	if e.end {
		parts = append(parts, "';'")
	}
	switch len(parts) {
	case 0:
		return "nothing more"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Suggestion says what may come next at the end of a shell's input, for
// tab completion.
type Suggestion struct {
	// Partial is the word being typed at the end of the input ("" when the
	// input ends in white space), a bare word or a backtick name not yet
	// closed (`prod-); Keywords are filtered by it and a completion
	// replaces it.
	Partial string
	// Keywords are the keywords that may come next, upper-case and sorted.
	Keywords []string
	// DomainName is true when the next token may be the name of an
	// existing domain (after USE, DROP DOMAIN [IF EXISTS], DESCRIBE DOMAIN).
	DomainName bool
	// NewName is true when the next token may be the name of a domain being
	// created.
	NewName bool
}

// Suggest reports what may follow at the end of prefix. Only the last,
// unfinished statement counts; input that cannot become a statement (a
// syntax error before the end, an unterminated string) suggests nothing.
func Suggest(prefix string) Suggestion {
	var toks []lexer.Token
	tooLong := false
	quotedPartial := -1 // offset of a backtick name still being typed
	sc := newScanner(prefix)
	for {
		tok, err := sc.next()
		if err != nil {
			// A backtick name left open at the end is the word being
			// typed (USE `prod-), not an error: complete it.
			if i := err.Pos.Offset; i < len(prefix) && prefix[i] == '`' {
				quotedPartial = i
				break
			}
			return Suggestion{}
		}
		if tok.Type == lexer.EOF {
			break
		}
		if tok.Type == tokPunct && tok.Value == ";" {
			toks, tooLong = toks[:0], false
			continue
		}
		if len(toks) == maxStatementTokens {
			tooLong = true
			continue
		}
		toks = append(toks, tok)
	}
	if tooLong {
		return Suggestion{} // nothing can follow a statement this long
	}
	var s Suggestion
	if quotedPartial >= 0 {
		s.Partial = prefix[quotedPartial:]
	} else if n := len(toks); n > 0 {
		last := toks[n-1]
		if (last.Type == tokKeyword || last.Type == tokIdent) && last.Pos.Offset+len(last.Value) == len(prefix) {
			s.Partial = prefix[last.Pos.Offset:]
			toks = toks[:n-1]
		}
	}
	for _, t := range toks {
		if t.Type == tokIllegal {
			return Suggestion{Partial: s.Partial}
		}
	}
	if len(toks) > 0 && !accepts(toks[:len(toks)-1], &toks[len(toks)-1]) {
		return Suggestion{Partial: s.Partial}
	}
	e := expectAfter(toks)
	for _, k := range e.keywords {
		if len(k) >= len(s.Partial) && strings.EqualFold(k[:len(s.Partial)], s.Partial) {
			s.Keywords = append(s.Keywords, k)
		}
	}
	sort.Strings(s.Keywords)
	if e.name && !e.number { // a rate also takes words, to quote NaN and inf back
		if len(toks) > 0 && (toks[0].Value == "CREATE" || toks[0].Value == "RESTORE") {
			s.NewName = true
		} else {
			s.DomainName = true
		}
	}
	return s
}

// NextKeywords returns the keywords that may follow at the end of prefix,
// upper-case and sorted: after "CREATE " it returns DOMAIN, IF, PACED and
// UNPACED; after "START AT " it returns NOW. A word being typed at the end
// of prefix filters the list ("CREATE PA" gives PACED).
func NextKeywords(prefix string) []string {
	return Suggest(prefix).Keywords
}

// ExpectsDomainName reports whether the next token at the end of prefix may
// be the name of an existing domain, so a shell can complete domain names.
func ExpectsDomainName(prefix string) bool {
	return Suggest(prefix).DomainName
}
