package grammar

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types of the hand-written lexer. Their names are the symbols the
// participle grammar refers to.
const (
	tokKeyword lexer.TokenType = iota + 1
	tokIdent
	tokQuotedName
	tokNumber
	tokDuration
	tokString
	tokPunct
	// tokIllegal is a character no token starts with. The participle lexer
	// turns it into an error; the statement splitter keeps it as a token so
	// that a shell can still see where a statement ends.
	tokIllegal
)

var symbols = map[string]lexer.TokenType{
	"EOF":        lexer.EOF,
	"Keyword":    tokKeyword,
	"Ident":      tokIdent,
	"QuotedName": tokQuotedName,
	"Number":     tokNumber,
	"Duration":   tokDuration,
	"String":     tokString,
	"Punct":      tokPunct,
}

// scanner is the hand-written lexer. It never allocates: token values are
// slices of the source, except keywords, whose value is the canonical
// upper-case spelling (the same length as the source text).
//
// Comments (`//` and `--` to end of line, `/* … */`) and white space are
// skipped; Format sets the comment callback to keep them. A number with a fraction or exponent is one token; a number
// followed directly by letters is one Duration token (`1h30m`, `1.5s`), so
// that the case-sensitive units (`m` minute, `M` month) reach ParseDuration
// intact.
type scanner struct {
	src string
	pos Position
	// comment, when set, is called with the extent of each comment skipped:
	// the formatter keeps comments, everything else skips them.
	comment func(start, end Position)
}

func newScanner(src string) scanner {
	return scanner{src: src, pos: Position{Offset: 0, Line: 1, Column: 1}}
}

// bump advances over n bytes that hold no newline.
func (s *scanner) bump(n int) {
	for i := 0; i < n; i++ {
		if s.src[s.pos.Offset]&0xC0 != 0x80 {
			s.pos.Column++
		}
		s.pos.Offset++
	}
}

// bumpAny advances over n bytes that may hold newlines.
func (s *scanner) bumpAny(n int) {
	for i := 0; i < n; i++ {
		c := s.src[s.pos.Offset]
		switch {
		case c == '\n':
			s.pos.Line++
			s.pos.Column = 1
		case c&0xC0 != 0x80:
			s.pos.Column++
		}
		s.pos.Offset++
	}
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isWordByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}

// skip passes white space and comments. It returns an error for a block
// comment that is never closed.
func (s *scanner) skip() *Error {
	for s.pos.Offset < len(s.src) {
		c := s.src[s.pos.Offset]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.bump(1)
		case c == '\n':
			s.bumpAny(1)
		case (c == '-' || c == '/') && s.peekAt(1) == c:
			start, end := s.pos, s.pos.Offset
			for end < len(s.src) && s.src[end] != '\n' {
				end++
			}
			s.bump(end - s.pos.Offset)
			if s.comment != nil {
				s.comment(start, s.pos)
			}
		case c == '/' && s.peekAt(1) == '*':
			start := s.pos
			rest := s.src[s.pos.Offset+2:]
			i := strings.Index(rest, "*/")
			if i < 0 {
				s.bumpAny(len(s.src) - s.pos.Offset)
				return &Error{Pos: start, Kind: ErrSyntax, Msg: "unterminated comment: close it with */"}
			}
			s.bumpAny(i + 4)
			if s.comment != nil {
				s.comment(start, s.pos)
			}
		default:
			return nil
		}
	}
	return nil
}

func (s *scanner) peekAt(i int) byte {
	if s.pos.Offset+i < len(s.src) {
		return s.src[s.pos.Offset+i]
	}
	return 0
}

// next returns the next token, or an EOF token at the end of the input.
// Errors (an unterminated string, name or comment) carry their position.
func (s *scanner) next() (lexer.Token, *Error) {
	if err := s.skip(); err != nil {
		return lexer.Token{}, err
	}
	start := s.pos
	if start.Offset >= len(s.src) {
		return lexer.Token{Type: lexer.EOF, Pos: toLexerPos(start)}, nil
	}
	c := s.src[start.Offset]
	var typ lexer.TokenType
	switch {
	case isLetter(c) || c == '_':
		end := start.Offset + 1
		for end < len(s.src) && isWordByte(s.src[end]) {
			end++
		}
		word := s.src[start.Offset:end]
		s.bump(end - start.Offset)
		if k, ok := lookupKeyword(word); ok {
			return lexer.Token{Type: tokKeyword, Value: k, Pos: toLexerPos(start)}, nil
		}
		return lexer.Token{Type: tokIdent, Value: word, Pos: toLexerPos(start)}, nil
	case isDigit(c):
		typ = s.number()
	case c == '\'' || c == '"' || c == '`':
		if err := s.quoted(c); err != nil {
			return lexer.Token{}, err
		}
		typ = tokString
		if c == '`' {
			typ = tokQuotedName
		}
	case c == ';' || c == '.' || c == ',' || c == '-' || c == '+' || c == '(' || c == ')' || c == '=' || c == '*':
		s.bump(1)
		typ = tokPunct
	default:
		_, size := utf8.DecodeRuneInString(s.src[start.Offset:])
		s.bump(size)
		typ = tokIllegal
	}
	return lexer.Token{Type: typ, Value: s.src[start.Offset:s.pos.Offset], Pos: toLexerPos(start)}, nil
}

// number scans digits, an optional fraction and an optional exponent. Text
// that continues with a letter makes the whole run one Duration token.
func (s *scanner) number() lexer.TokenType {
	src, i := s.src, s.pos.Offset
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	if i+1 < len(src) && src[i] == '.' && isDigit(src[i+1]) {
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && src[i]|0x20 == 'e' {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			i = j
		}
	}
	typ := tokNumber
	if i < len(src) && isLetter(src[i]) {
		typ = tokDuration
		for i < len(src) && (isLetter(src[i]) || isDigit(src[i]) || src[i] == '.') {
			i++
		}
	}
	s.bump(i - s.pos.Offset)
	return typ
}

// quoted scans a string or backtick name; a doubled quote character stands
// for itself.
func (s *scanner) quoted(q byte) *Error {
	start := s.pos
	src := s.src
	i := start.Offset + 1
	for {
		for i < len(src) && src[i] != q {
			i++
		}
		if i >= len(src) {
			s.bumpAny(len(src) - start.Offset)
			what := "string"
			if q == '`' {
				what = "quoted name"
			}
			return &Error{Pos: start, Kind: ErrSyntax, Msg: "unterminated " + what + ": close it with " + string(q)}
		}
		if i+1 < len(src) && src[i+1] == q {
			i += 2
			continue
		}
		break
	}
	s.bumpAny(i + 1 - start.Offset)
	return nil
}

func toLexerPos(p Position) lexer.Position {
	return lexer.Position{Offset: p.Offset, Line: p.Line, Column: p.Column}
}

func fromLexerPos(p lexer.Position) Position {
	return Position{Offset: p.Offset, Line: p.Line, Column: p.Column}
}

// Definition is the lexer.Definition that plugs the hand-written lexer into
// participle.
type Definition struct{}

var _ lexer.StringDefinition = Definition{}

// Symbols returns the token types the grammar names.
func (Definition) Symbols() map[string]lexer.TokenType { return symbols }

// Lex reads all of r and lexes it.
func (d Definition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

// LexString lexes src without copying it.
func (Definition) LexString(_ string, src string) (lexer.Lexer, error) {
	sc := newScanner(src)
	return &participleLexer{sc: sc}, nil
}

type participleLexer struct{ sc scanner }

func (l *participleLexer) Next() (lexer.Token, error) {
	tok, err := l.sc.next()
	if err != nil {
		return tok, err
	}
	if tok.Type == tokIllegal {
		return tok, illegalError(tok)
	}
	return tok, nil
}

func illegalError(tok lexer.Token) *Error {
	return &Error{Pos: fromLexerPos(tok.Pos), Kind: ErrSyntax, Msg: "unexpected character " + quote(tok.Value)}
}
