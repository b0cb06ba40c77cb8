package grammar

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Each leaf production consumes the tokens of its rule from the
// participle lexer it is given, or none: it returns participle.NextMatch
// when the next token cannot begin the rule, so that participle tries the
// next alternative, and an *participle.UnexpectedTokenError at the
// offending token when the rule began but cannot finish, exactly where
// participle's own descent over the rule failed (translate turns either
// into the grammar's message). Tokens is the run of tokens matched, a
// slice of the lexer's own; a clause's leading keywords are not part of it.
//
// The leaves of a clause (pPacedName, pUnpacedName, pDomainName, pPeriod,
// pSkew, pRate, pPlacement) match the
// clause's leading keywords too: a keyword matched by participle's descent
// costs two allocations and a step of its sequence, one matched here none.

// leadingKeywords matches the keywords that begin a clause. It reports
// false, having consumed nothing, when the first is not next; once the
// first is taken, another that is missing is an error at the token found
// in its place.
func leadingKeywords(lex *lexer.PeekingLexer, words []string) (bool, error) {
	for i, w := range words {
		if t := lex.Peek(); t.Type != tokKeyword || t.Value != w {
			if i == 0 {
				return false, nil
			}
			return false, &participle.UnexpectedTokenError{Unexpected: *t}
		}
		lex.Next()
	}
	return true, nil
}

var (
	pacedDomain   = []string{"PACED", "DOMAIN"}
	unpacedDomain = []string{"UNPACED", "DOMAIN"}
	domain        = []string{"DOMAIN"}
	withPeriod    = []string{"WITH", "PERIOD"}
	skew          = []string{"SKEW"}
	timeRate      = []string{"TIME", "RATE"}
	placement     = []string{"PLACEMENT"}
)

// pName is a name: (Ident | QuotedName) { '.' (Ident | QuotedName) }. The
// dotted continuation exists only to refuse qualified names with a clear
// message (Qualified).
type pName struct {
	Tokens    []lexer.Token
	First     string
	Qualified bool
}

func isNameToken(t *lexer.Token) bool { return t.Type == tokIdent || t.Type == tokQuotedName }

// Parse implements participle.Parseable.
func (n *pName) Parse(lex *lexer.PeekingLexer) error { return n.parse(lex, nil) }

func (n *pName) parse(lex *lexer.PeekingLexer, keywords []string) error {
	if ok, err := leadingKeywords(lex, keywords); !ok {
		if err == nil {
			return participle.NextMatch
		}
		return err
	}
	start := lex.RawCursor()
	if t := lex.Peek(); !isNameToken(t) {
		if len(keywords) > 0 {
			return &participle.UnexpectedTokenError{Unexpected: *t}
		}
		return participle.NextMatch
	}
	n.First = lex.Next().Value
	for t := lex.Peek(); t.Type == tokPunct && t.Value == "."; t = lex.Peek() {
		lex.Next()
		if t := lex.Peek(); !isNameToken(t) {
			return &participle.UnexpectedTokenError{Unexpected: *t}
		}
		lex.Next()
		n.Qualified = true
	}
	n.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}

// The names that CREATE's domain keywords introduce are clauses of their
// own: pPacedName is 'PACED' 'DOMAIN' name, pUnpacedName 'UNPACED' 'DOMAIN'
// name and pDomainName 'DOMAIN' name.
type (
	pPacedName   struct{ pName }
	pUnpacedName struct{ pName }
	pDomainName  struct{ pName }
)

// Parse implements participle.Parseable.
func (n *pPacedName) Parse(lex *lexer.PeekingLexer) error { return n.parse(lex, pacedDomain) }

// Parse implements participle.Parseable.
func (n *pUnpacedName) Parse(lex *lexer.PeekingLexer) error { return n.parse(lex, unpacedDomain) }

// Parse implements participle.Parseable.
func (n *pDomainName) Parse(lex *lexer.PeekingLexer) error { return n.parse(lex, domain) }

// pDuration is a duration: Duration | Number, after its clause's keywords.
type pDuration struct {
	Tokens []lexer.Token
	Text   string
}

func (d *pDuration) parse(lex *lexer.PeekingLexer, keywords []string) error {
	if ok, err := leadingKeywords(lex, keywords); !ok {
		if err == nil {
			return participle.NextMatch
		}
		return err
	}
	start := lex.RawCursor()
	if t := lex.Peek(); t.Type != tokDuration && t.Type != tokNumber {
		return &participle.UnexpectedTokenError{Unexpected: *t}
	}
	d.Text = lex.Next().Value
	d.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}

// pPeriod is 'WITH' 'PERIOD' (Duration | Number).
type pPeriod struct{ pDuration }

// Parse implements participle.Parseable.
func (d *pPeriod) Parse(lex *lexer.PeekingLexer) error { return d.parse(lex, withPeriod) }

// pSkew is 'SKEW' (Duration | Number).
type pSkew struct{ pDuration }

// Parse implements participle.Parseable.
func (d *pSkew) Parse(lex *lexer.PeekingLexer) error { return d.parse(lex, skew) }

// pToken is a quoted string: String.
type pToken struct {
	Tokens []lexer.Token
	Text   string
}

// Parse implements participle.Parseable.
func (s *pToken) Parse(lex *lexer.PeekingLexer) error {
	start := lex.RawCursor()
	if lex.Peek().Type != tokString {
		return participle.NextMatch
	}
	s.Text = lex.Next().Value
	s.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}

// pRate is a TIME RATE clause: 'TIME' 'RATE' [ '-' | '+' ] (Number |
// Ident).
type pRate struct {
	Tokens []lexer.Token
	Sign   string
	Text   string
}

// Parse implements participle.Parseable.
func (r *pRate) Parse(lex *lexer.PeekingLexer) error {
	if ok, err := leadingKeywords(lex, timeRate); !ok {
		if err == nil {
			return participle.NextMatch
		}
		return err
	}
	start := lex.RawCursor()
	if t := lex.Peek(); t.Type == tokPunct && (t.Value == "-" || t.Value == "+") {
		r.Sign = lex.Next().Value
	}
	if t := lex.Peek(); t.Type != tokNumber && t.Type != tokIdent {
		return &participle.UnexpectedTokenError{Unexpected: *t}
	}
	r.Text = lex.Next().Value
	r.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}

// pPlacement is a placement clause: 'PLACEMENT' ( 'NEUTRAL' | 'REQUIRE'
// 'COLOCATION' | 'PREFER' 'COLOCATION' | 'SUGGEST' 'SEPARATION' ). Policy
// is the policy's keywords run together, as participle captured them.
type pPlacement struct {
	Tokens []lexer.Token
	Policy string
}

// Parse implements participle.Parseable.
func (p *pPlacement) Parse(lex *lexer.PeekingLexer) error {
	if ok, err := leadingKeywords(lex, placement); !ok {
		if err == nil {
			return participle.NextMatch
		}
		return err
	}
	start := lex.RawCursor()
	t := lex.Peek()
	var second string
	switch t.Value {
	case "NEUTRAL":
		p.Policy = "NEUTRAL"
	case "REQUIRE":
		p.Policy, second = "REQUIRECOLOCATION", "COLOCATION"
	case "PREFER":
		p.Policy, second = "PREFERCOLOCATION", "COLOCATION"
	case "SUGGEST":
		p.Policy, second = "SUGGESTSEPARATION", "SEPARATION"
	default:
		return &participle.UnexpectedTokenError{Unexpected: *t}
	}
	lex.Next()
	if second != "" {
		if t := lex.Peek(); t.Type != tokKeyword || t.Value != second {
			return &participle.UnexpectedTokenError{Unexpected: *t}
		}
		lex.Next()
	}
	p.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}

// pNodeName is 'NODE' and a node name: an identifier, a backquoted name or
// a string literal (a name with '-' is quoted either way).
type pNodeName struct {
	Tokens []lexer.Token
	Text   string
}

var nodeKeyword = []string{"NODE"}

// Parse implements participle.Parseable.
func (n *pNodeName) Parse(lex *lexer.PeekingLexer) error {
	if ok, err := leadingKeywords(lex, nodeKeyword); !ok {
		if err == nil {
			return participle.NextMatch
		}
		return err
	}
	start := lex.RawCursor()
	if t := lex.Peek(); t.Type != tokIdent && t.Type != tokQuotedName && t.Type != tokString {
		return &participle.UnexpectedTokenError{Unexpected: *t}
	}
	n.Text = lex.Next().Value
	n.Tokens = lex.Range(start, lex.RawCursor())
	return nil
}
