package grammar

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar. These types never leave the package: build turns
// them into the public AST, converting every literal on the way. To add a
// statement, add a rule here, its keywords to keywords.go, its AST type to
// ast.go, a case to build and its keyword to productions.
//
// A statement's first keyword is matched here, in pStatement, and its
// production holds the rest of the statement (its tail): the keyword
// selects the production, so Parse parses the tail alone (see
// productions). A statement that is its keyword alone has no production.
type pStatement struct {
	Tokens   []lexer.Token
	Create   *pCreate   `parser:"  'CREATE' @@"`
	Alter    *pAlter    `parser:"| 'ALTER' @@"`
	Start    *pStart    `parser:"| 'START' @@"`
	Describe *pDescribe `parser:"| 'DESCRIBE' @@"`
	Drop     *pDrop     `parser:"| 'DROP' @@"`
	Backup   *pBackup   `parser:"| 'BACKUP' @@"`
	Restore  *pRestore  `parser:"| 'RESTORE' @@"`
	Show     *pShow     `parser:"| 'SHOW' @@"`
	Stop     bool       `parser:"| @'STOP'"`
	Attach   *pAttach   `parser:"| 'ATTACH' @@"`
	Detach   *pDetach   `parser:"| 'DETACH' @@"`
	Use      *pUse      `parser:"| 'USE' @@"`
	List     *pList     `parser:"| 'LIST' @@"`
	Begin    bool       `parser:"| @'BEGIN'"`
	Commit   bool       `parser:"| @'COMMIT'"`
	Rollback string     `parser:"| @('REVERT' | 'ROLLBACK')"`
	Cordon   *pNode     `parser:"| 'CORDON' @@"`
	Uncordon *pNode     `parser:"| 'UNCORDON' @@"`
	Drain    *pNode     `parser:"| 'DRAIN' @@"`
}

// pNode is the tail of CORDON, UNCORDON and DRAIN: 'NODE' and a node name.
type pNode struct {
	Name pNodeName `parser:"@@"`
}

// A production captures only what build reads. A run of keywords that
// decides nothing is matched into an empty struct, so that the production
// costs no allocation of its own and no capture.
type (
	pAttach struct {
		DomainClock struct{} `parser:"'DOMAIN' 'CLOCK'"`
	}
	pDetach struct {
		DomainClock struct{} `parser:"'DOMAIN' 'CLOCK'"`
	}
	pUse struct {
		Name pName `parser:"@@"`
	}
	pList struct {
		Domains struct{} `parser:"'DOMAINS'"`
		Like    pToken   `parser:"( 'LIKE' @@ )?"`
	}
)

type pShow struct {
	ClusterStatus struct{} `parser:"( 'CLUSTER' 'STATUS'"`
	Like          pToken   `parser:"( 'LIKE' @@ )?"`
	All           bool     `parser:"| @'ALL' 'TRANSACTIONS'"`
	Transactions  bool     `parser:"| @'TRANSACTIONS' )"`
}

// The productions hold their parts by value, not by pointer: participle
// allocates a captured struct once either way, and a pointer field costs a
// second allocation and a copy. A part that is absent is the zero value; a
// matched one always has Tokens (or, for pPaced and pStartAt, a matched
// part of its own), which is how build tells them apart.
type pCreate struct {
	IfNotExists bool         `parser:"( @'IF' 'NOT' 'EXISTS' )?"`
	Paced       pPaced       `parser:"( @@"`
	Unpaced     pUnpacedName `parser:"| @@"`
	Short       pDomainName  `parser:"| @@ )"`
	Placement   pPlacement   `parser:"@@?"`
}

type pPaced struct {
	Name   pPacedName `parser:"@@"`
	Period pPeriod    `parser:"@@"`
	Skew   pSkew      `parser:"@@"`
}

type pAlter struct {
	Placement pPlacement `parser:"'DOMAIN' 'SET' @@"`
}

type pStart struct {
	At pStartAt `parser:"( 'AT' @@ )?"`
}

type pStartAt struct {
	Now   bool   `parser:"( @'NOW'"`
	Stamp pToken `parser:"| @@ )"`
	Rate  pRate  `parser:"@@?"`
}

type pDescribe struct {
	Backup      pToken `parser:"( 'BACKUP' @@"`
	Transaction bool   `parser:"| @'TRANSACTION'"`
	Name        pName  `parser:"| 'DOMAIN' @@? )"`
}

type pBackup struct {
	Cluster bool     `parser:"( @'CLUSTER'"`
	Domain  struct{} `parser:"| 'DOMAIN'"`
	Name    pName    `parser:"  @@? )"`
	Path    pToken   `parser:"'TO' @@"`
}

type pRestore struct {
	Cluster bool   `parser:"( @'CLUSTER'"`
	Name    pName  `parser:"| 'DOMAIN' @@"`
	As      pName  `parser:"  ( 'AS' @@ )? )"`
	Path    pToken `parser:"'FROM' @@"`
	Resume  bool   `parser:"@'RESUME'?"`
	DryRun  bool   `parser:"( @'DRY' 'RUN' )?"`
}

type pDrop struct {
	IfExists bool  `parser:"'DOMAIN' ( @'IF' 'EXISTS' )?"`
	Name     pName `parser:"@@"`
}

// The leaves of the grammar (pName and the names of CREATE, pPeriod,
// pSkew, pToken, pRate, pPlacement) are participle custom productions:
// each implements participle.Parseable in leaves.go, whose doc comments
// give its rule. Matching a token or two there takes two allocations where
// participle's reflective descent over the same rule took about ten.

// buildParser builds a participle parser for production P of the grammar.
// A parser for a production is the same rules whether built on its own or
// as part of pStatement: participle derives it from P's types alone.
func buildParser[P any]() *participle.Parser[P] {
	return participle.MustBuild[P](
		participle.Lexer(Definition{}),
		participle.UseLookahead(0), // the grammar is LL(1): commit to a branch once it consumed a token
	)
}

// statementParser returns the parser of the whole grammar, which reports
// errors and answers what may come next. It is built on first use, not at
// start-up: building it takes longer than a short-lived process such as
// `nspl -c` spends on everything else it parses, and a script that parses
// cleanly never needs it.
var statementParser = sync.OnceValue(buildParser[pStatement])

// Parse parses a script: zero or more statements, each terminated by ';'
// (optional after the last). Keywords are case-insensitive; comments are
// `//` and `--` to end of line and `/* … */`. Literals are converted here:
// durations to uint64 nanoseconds, timestamps to int64 Unix nanoseconds,
// TIME RATE to float64, names to their lower-cased stored form.
//
// Parse stops at the first error and returns it as a *Error with its
// position; the statements before it are returned too.
func Parse(src string) ([]Statement, error) {
	parses.Add(1)
	peek, sc := lexScript(src)
	out := make([]Statement, 0, len(sc.stmts))
	for _, ext := range sc.stmts {
		toks := sc.toks[ext.start:ext.end]
		st, err := parseShared(peek, ext.start, toks)
		if err != nil {
			// The reference path parses the statement on its own with the
			// whole grammar; its error is the one to report.
			if st, err = parseTokens(toks, ext.term); err != nil {
				return out, err
			}
		}
		out = append(out, st)
	}
	if sc.failure == nil {
		return out, nil
	}
	if len(sc.partial) > 0 {
		// A syntax error before the failure is the one to report.
		term := lexer.Token{Type: lexer.EOF, Pos: toLexerPos(sc.failure.Pos)}
		if _, err := parseTokens(sc.partial, term); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Pos.Offset < sc.failure.Pos.Offset {
				return out, err
			}
		}
	}
	return out, sc.failure
}

// parses counts the calls of Parse (Parses).
var parses atomic.Uint64

// Parses returns how many times Parse, and so ParseStatement, has run in
// this process. It is there so that a consumer's tests can hold it to
// parsing each statement once (a shell or a client that parsed a statement
// again to classify or print it would show in the count); it costs one
// atomic add per parse.
func Parses() uint64 { return parses.Load() }

// ParseStatement parses text that holds exactly one statement (its ';' is
// optional).
func ParseStatement(src string) (Statement, error) {
	stmts, err := Parse(src)
	switch {
	case err != nil:
		return nil, err
	case len(stmts) == 0:
		return nil, &Error{Pos: endOf(src), Kind: ErrSyntax, Msg: "expected a statement, found end of input"}
	case len(stmts) > 1:
		return nil, &Error{Pos: stmts[1].Pos(), Kind: ErrSyntax, Msg: "expected one statement, found another; run statements one at a time"}
	}
	return stmts[0], nil
}

func endOf(src string) Position {
	return Position{Line: 1, Column: 1}.advance(src)
}

// maxStatementTokens bounds the tokens of one statement. The longest
// statement of the language has fewer than twenty; a statement that reaches
// the bound is refused at its next token, so neither parsing nor the error
// message (which asks the grammar what it expects after the tokens before
// the offending one) costs more than a bounded amount of work per statement.
const maxStatementTokens = 64

// maxStatementGuess caps the statement extents lexScript allocates up
// front; a longer script grows the slice as it lexes.
const maxStatementGuess = 256

// lexedScript is a script lexed once into the participle lexer every
// statement is parsed from: the extents of its complete statements, and
// how lexing ended.
type lexedScript struct {
	toks  []lexer.Token // the lexer's own tokens, terminators included
	stmts []extent
	// failure, when set, ended lexing early: a lexer error or a statement
	// that is too long. partial holds the tokens of the statement it
	// interrupted, before the failure.
	failure *Error
	partial []lexer.Token
}

// extent is one complete, non-empty statement: toks[start:end] and the
// token that ends it (';' or EOF).
type extent struct {
	start, end int
	term       lexer.Token
}

// lexScript lexes src once, up to its end or its first failure, straight
// into one participle lexer, so that the tokens are copied once per script
// rather than once per statement. A lexer error or a statement reaching
// maxStatementTokens ends the token stream there, so hostile input costs
// time linear in the statements before it and never more.
func lexScript(src string) (*lexer.PeekingLexer, lexedScript) {
	// A statement is at least two bytes ("x;"), so the capacity stays
	// bounded by the input however many ';' it holds.
	guess := min(strings.Count(src, ";")+1, len(src)/2+1, maxStatementGuess)
	l := &scriptLexer{sc: newScanner(src), stmts: make([]extent, 0, guess)}
	peek, err := lexer.Upgrade(l)
	if err != nil {
		// scriptLexer reports failures as the end of its stream instead.
		panic("grammar: the script lexer failed: " + err.Error())
	}
	ls := lexedScript{toks: peek.Range(0, lexer.RawCursor(l.n)), stmts: l.stmts, failure: l.failure}
	if l.failure != nil {
		ls.partial = ls.toks[l.start:l.n]
	}
	return peek, ls
}

// scriptLexer is the lexer.Lexer lexScript upgrades: the scanner's
// tokens, each statement's terminator included (no production matches
// ';', so a statement parsed from the shared lexer stops before it), and
// the statement extents found on the way.
type scriptLexer struct {
	sc      scanner
	n       int // tokens returned before the EOF
	start   int // index of the first token of the statement being lexed
	stmts   []extent
	failure *Error
}

func (l *scriptLexer) Next() (lexer.Token, error) {
	tok, lexErr := l.sc.next()
	if lexErr == nil && tok.Type == tokIllegal {
		lexErr = illegalError(tok)
	}
	if lexErr != nil {
		l.failure = lexErr
		return lexer.Token{Type: lexer.EOF, Pos: toLexerPos(lexErr.Pos)}, nil
	}
	end := tok.Type == lexer.EOF || (tok.Type == tokPunct && tok.Value == ";")
	if !end && l.n-l.start == maxStatementTokens {
		// No statement is this long. The grammar's own error wins if it
		// lies before this token; otherwise the length is refused without
		// lexing the rest.
		l.failure = &Error{Pos: fromLexerPos(tok.Pos), Kind: ErrSyntax,
			Msg: fmt.Sprintf("statement too long at %s: no statement has more than %d tokens; end the statement with ';'",
				describeToken(tok, tok), maxStatementTokens)}
		return lexer.Token{Type: lexer.EOF, Pos: tok.Pos}, nil
	}
	if end && l.n > l.start {
		l.stmts = append(l.stmts, extent{start: l.start, end: l.n, term: tok})
	}
	if tok.Type == lexer.EOF {
		return tok, nil
	}
	l.n++
	if end {
		l.start = l.n
	}
	return tok, nil
}

// sliceLexer replays the tokens of one statement, then an EOF token at the
// position of its terminator.
type sliceLexer struct {
	toks []lexer.Token
	eof  lexer.Position
	i    int
}

func (l *sliceLexer) Next() (lexer.Token, error) {
	if l.i < len(l.toks) {
		l.i++
		return l.toks[l.i-1], nil
	}
	return lexer.Token{Type: lexer.EOF, Pos: l.eof}, nil
}

// A production parses one statement form. Every statement begins with a
// keyword of its own, so the form is known from the first token: parsing
// that form's tail production directly, from the token after the keyword,
// skips the alternatives the whole grammar would try (and allocate for)
// first, and gives the same tree, since no other alternative can match a
// statement beginning with that keyword. toks is the whole statement, its
// keyword included; the shared lexer stands just past the keyword.
type production func(peek *lexer.PeekingLexer, toks []lexer.Token) (Statement, error)

// allowTrailing lets a production stop before the statement's ';'.
var allowTrailing = participle.AllowTrailing(true)

// tailOf parses tail production P from the shared lexer and builds it
// into a statement. The production must take every token of the statement.
// Its parser, like statementParser, is built on first use.
func tailOf[P any](build func(n Node, p *P) (Statement, *Error)) production {
	pp := sync.OnceValue(buildParser[P])
	return func(peek *lexer.PeekingLexer, toks []lexer.Token) (Statement, error) {
		end := peek.RawCursor() + lexer.RawCursor(len(toks)-1)
		p, err := pp().ParseFromLexer(peek, allowTrailing)
		if err != nil {
			return nil, err
		}
		if peek.RawCursor() != end {
			return nil, errNoProduction // tokens the production did not take
		}
		st, berr := build(nodeOf(toks), p)
		if berr != nil {
			return nil, berr
		}
		return st, nil
	}
}

// keywordOnly is the production of a statement that is its keyword alone
// (pStatement matches it without a production of its own): it takes no
// token after the keyword.
func keywordOnly(build func(n Node, keyword string) Statement) production {
	return func(_ *lexer.PeekingLexer, toks []lexer.Token) (Statement, error) {
		if len(toks) != 1 {
			return nil, errNoProduction
		}
		return build(nodeOf(toks), toks[0].Value), nil
	}
}

// productions maps a statement's first keyword to its production.
var productions = map[string]production{
	"CREATE":   tailOf(buildCreate),
	"ALTER":    tailOf(buildAlter),
	"START":    tailOf(buildStart),
	"DESCRIBE": tailOf(buildDescribe),
	"DROP":     tailOf(buildDrop),
	"BACKUP":   tailOf(buildBackup),
	"RESTORE":  tailOf(buildRestore),
	"SHOW":     tailOf(buildShow),
	"ATTACH":   tailOf(buildAttach),
	"DETACH":   tailOf(buildDetach),
	"USE":      tailOf(buildUse),
	"LIST":     tailOf(buildList),
	"CORDON":   tailOf(buildMaintenance("CORDON")),
	"UNCORDON": tailOf(buildMaintenance("UNCORDON")),
	"DRAIN":    tailOf(buildMaintenance("DRAIN")),
	"STOP":     keywordOnly(buildStop),
	"BEGIN":    keywordOnly(buildBegin),
	"COMMIT":   keywordOnly(buildCommit),
	"REVERT":   keywordOnly(buildRollback),
	"ROLLBACK": keywordOnly(buildRollback),
}

// errNoProduction sends a statement that begins with no statement keyword
// to the reference path, which reports what was expected.
var errNoProduction = errors.New("no statement begins with this token")

// parseShared parses the statement toks, which begins at token index start
// of the script's one shared lexer, with the production its first keyword
// selects. Any error means only that the fast path does not apply: the
// caller parses the statement again on its own (parseTokens) for the error
// to report, so errors read exactly as the whole grammar gives them.
func parseShared(peek *lexer.PeekingLexer, start int, toks []lexer.Token) (Statement, error) {
	prod, ok := productions[toks[0].Value]
	if toks[0].Type != tokKeyword || !ok {
		return nil, errNoProduction
	}
	if raw := int(peek.RawCursor()); raw > start {
		return nil, errNoProduction
	}
	peek.FastForward(lexer.RawCursor(start)) // past the keyword
	return prod(peek, toks)
}

func parseTokens(toks []lexer.Token, term lexer.Token) (Statement, error) {
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks, eof: term.Pos})
	if err != nil {
		return nil, translate(err, toks, term)
	}
	p, err := statementParser().ParseFromLexer(peek)
	if err != nil {
		return nil, translate(err, toks, term)
	}
	st, berr := build(p)
	if berr != nil {
		return nil, berr
	}
	return st, nil
}

// translate turns a participle error into a *Error that says what was
// expected, by asking the grammar what it accepts after the tokens before
// the offending one, and what was found.
func translate(err error, toks []lexer.Token, term lexer.Token) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var pe participle.Error
	if !errors.As(err, &pe) {
		return &Error{Pos: fromLexerPos(term.Pos), Kind: ErrSyntax, Msg: err.Error()}
	}
	at := pe.Position().Offset
	found := lexer.Token{Type: lexer.EOF, Pos: term.Pos}
	prefix := toks
	for i, t := range toks {
		if t.Pos.Offset >= at {
			found, prefix = t, toks[:i]
			break
		}
	}
	exp := expectAfter(prefix)
	msg := "expected " + exp.describe() + ", found " + describeToken(found, term)
	if found.Type == tokKeyword && exp.name && !exp.number {
		msg += " (" + found.Value + " is a keyword; write `" + strings.ToLower(found.Value) + "` in backticks to use it as a name)"
	}
	if found.Type == tokString && exp.name && !exp.str && len(found.Value) >= 2 {
		// SQL's double quotes, or single quotes, around a name: NSPL
		// quotes names with backticks and keeps quotes for literals.
		inner := found.Value[1 : len(found.Value)-1]
		if !strings.ContainsAny(inner, "`\n") {
			msg += " (quotes make a text literal; a name is written bare or in backticks: `" + inner + "`)"
		}
	}
	return &Error{Pos: fromLexerPos(found.Pos), Kind: ErrSyntax, Msg: msg}
}

func describeToken(tok lexer.Token, term lexer.Token) string {
	switch {
	case tok.Type == lexer.EOF && term.Type == lexer.EOF:
		return "end of input"
	case tok.Type == lexer.EOF:
		return "';'"
	case tok.Type == tokKeyword:
		return tok.Value
	default:
		return quote(tok.Value)
	}
}
