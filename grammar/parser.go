package grammar

import (
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar. These types never leave the package: build turns
// them into the public AST, converting every literal on the way. To add a
// statement, add a rule here, its keywords to keywords.go, its AST type to
// ast.go and a case to build.
type pStatement struct {
	Tokens   []lexer.Token
	Create   *pCreate   `parser:"  @@"`
	Alter    *pAlter    `parser:"| @@"`
	Start    *pStart    `parser:"| @@"`
	Stop     bool       `parser:"| @'STOP'"`
	Attach   bool       `parser:"| @'ATTACH' 'DOMAIN' 'CLOCK'"`
	Detach   bool       `parser:"| @'DETACH' 'DOMAIN' 'CLOCK'"`
	Use      *pName     `parser:"| 'USE' @@"`
	List     bool       `parser:"| @'LIST' 'DOMAINS'"`
	Describe *pDescribe `parser:"| @@"`
	Drop     *pDrop     `parser:"| @@"`
	Backup   *pBackup   `parser:"| @@"`
	Restore  *pRestore  `parser:"| @@"`
	Show     *pShow     `parser:"| @@"`
	Begin    bool       `parser:"| @'BEGIN'"`
	Commit   bool       `parser:"| @'COMMIT'"`
	Rollback string     `parser:"| @('REVERT' | 'ROLLBACK')"`
}

type pShow struct {
	Cluster      bool `parser:"'SHOW' ( @'CLUSTER' 'STATUS'"`
	Transactions bool `parser:"| @'TRANSACTIONS' )"`
}

type pCreate struct {
	IfNotExists bool        `parser:"'CREATE' ( @'IF' 'NOT' 'EXISTS' )?"`
	Paced       *pPaced     `parser:"( @@"`
	Unpaced     *pName      `parser:"| 'UNPACED' 'DOMAIN' @@"`
	Short       *pName      `parser:"| 'DOMAIN' @@ )"`
	Placement   *pPlacement `parser:"( 'PLACEMENT' @@ )?"`
}

type pPaced struct {
	Name   *pName     `parser:"'PACED' 'DOMAIN' @@"`
	Period *pDuration `parser:"'WITH' 'PERIOD' @@"`
	Skew   *pDuration `parser:"'SKEW' @@"`
}

type pAlter struct {
	Placement *pPlacement `parser:"'ALTER' 'DOMAIN' 'SET' 'PLACEMENT' @@"`
}

type pStart struct {
	At *pStartAt `parser:"'START' ( 'AT' @@ )?"`
}

type pStartAt struct {
	Now   bool    `parser:"( @'NOW'"`
	Stamp *pToken `parser:"| @@ )"`
	Rate  *pRate  `parser:"( 'TIME' 'RATE' @@ )?"`
}

type pDescribe struct {
	Backup *pToken `parser:"'DESCRIBE' ( 'BACKUP' @@"`
	Name   *pName  `parser:"| 'DOMAIN' @@? )"`
}

type pBackup struct {
	Cluster bool    `parser:"'BACKUP' ( @'CLUSTER'"`
	Domain  bool    `parser:"| @'DOMAIN'"`
	Name    *pName  `parser:"  @@? )"`
	Path    *pToken `parser:"'TO' @@"`
}

type pRestore struct {
	Cluster bool    `parser:"'RESTORE' ( @'CLUSTER'"`
	Name    *pName  `parser:"| 'DOMAIN' @@"`
	As      *pName  `parser:"  ( 'AS' @@ )? )"`
	Path    *pToken `parser:"'FROM' @@"`
	Resume  bool    `parser:"@'RESUME'?"`
	DryRun  bool    `parser:"( @'DRY' 'RUN' )?"`
}

type pDrop struct {
	IfExists bool   `parser:"'DROP' 'DOMAIN' ( @'IF' 'EXISTS' )?"`
	Name     *pName `parser:"@@"`
}

// pName is a name; the dotted continuation exists only to refuse qualified
// names with a clear message.
type pName struct {
	Tokens []lexer.Token
	Parts  []string `parser:"@(Ident | QuotedName) ( '.' @(Ident | QuotedName) )*"`
}

type pDuration struct {
	Tokens []lexer.Token
	Text   string `parser:"@(Duration | Number)"`
}

type pToken struct {
	Tokens []lexer.Token
	Text   string `parser:"@String"`
}

type pRate struct {
	Tokens []lexer.Token
	Sign   string `parser:"@('-' | '+')?"`
	Text   string `parser:"@(Number | Ident)"`
}

type pPlacement struct {
	Tokens []lexer.Token
	Policy string `parser:"@( 'NEUTRAL' | 'REQUIRE' 'COLOCATION' | 'PREFER' 'COLOCATION' | 'SUGGEST' 'SEPARATION' )"`
}

var statementParser = participle.MustBuild[pStatement](
	participle.Lexer(Definition{}),
	participle.UseLookahead(0), // the grammar is LL(1): commit to a branch once it consumed a token
)

// Parse parses a script: zero or more statements, each terminated by ';'
// (optional after the last). Keywords are case-insensitive; comments are
// `//` and `--` to end of line and `/* … */`. Literals are converted here:
// durations to uint64 nanoseconds, timestamps to int64 Unix nanoseconds,
// TIME RATE to float64, names to their lower-cased stored form.
//
// Parse stops at the first error and returns it as a *Error with its
// position; the statements before it are returned too.
func Parse(src string) ([]Statement, error) {
	var out []Statement
	err := eachStatement(src, func(toks []lexer.Token, term lexer.Token, partial bool) error {
		st, err := parseTokens(toks, term)
		if err != nil {
			return err
		}
		if !partial {
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

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

// eachStatement lexes src once and calls fn with the tokens of each
// non-empty statement and the token that ends it (';' or EOF). When the
// lexer fails inside a statement, fn sees the tokens before the failure
// with partial set, and its error wins if it lies before the lexer's.
func eachStatement(src string, fn func(toks []lexer.Token, term lexer.Token, partial bool) error) error {
	sc := newScanner(src)
	toks := make([]lexer.Token, 0, 16)
	for {
		tok, lexErr := sc.next()
		if lexErr == nil && tok.Type == tokIllegal {
			lexErr = illegalError(tok)
		}
		if lexErr != nil {
			// A syntax error before the bad character is the one to report.
			if len(toks) > 0 {
				term := lexer.Token{Type: lexer.EOF, Pos: toLexerPos(lexErr.Pos)}
				if err := fn(toks, term, true); err != nil {
					var e *Error
					if errors.As(err, &e) && e.Pos.Offset < lexErr.Pos.Offset {
						return err
					}
				}
			}
			return lexErr
		}
		end := tok.Type == lexer.EOF || (tok.Type == tokPunct && tok.Value == ";")
		if !end && len(toks) == maxStatementTokens {
			// No statement is this long. Report the grammar's own error if
			// it lies before this token; otherwise refuse the length, without
			// lexing the rest, so hostile input costs time linear in the
			// statements before it and never more.
			term := lexer.Token{Type: lexer.EOF, Pos: tok.Pos}
			if err := fn(toks, term, true); err != nil {
				var e *Error
				if errors.As(err, &e) && e.Pos.Offset < tok.Pos.Offset {
					return err
				}
			}
			return &Error{Pos: fromLexerPos(tok.Pos), Kind: ErrSyntax,
				Msg: fmt.Sprintf("statement too long at %s: no statement has more than %d tokens; end the statement with ';'",
					describeToken(tok, tok), maxStatementTokens)}
		}
		if !end {
			toks = append(toks, tok)
			continue
		}
		if len(toks) > 0 {
			if err := fn(toks, tok, false); err != nil {
				return err
			}
			toks = toks[:0]
		}
		if tok.Type == lexer.EOF {
			return nil
		}
	}
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

func parseTokens(toks []lexer.Token, term lexer.Token) (Statement, error) {
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks, eof: term.Pos})
	if err != nil {
		return nil, translate(err, toks, term)
	}
	p, err := statementParser.ParseFromLexer(peek)
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
