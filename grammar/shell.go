package grammar

import "github.com/alecthomas/participle/v2/lexer"

// Complete reports whether text is ready to run in a shell: the lexer sees
// a ';' outside strings and comments with nothing but white space and
// comments after it. Text inside an unterminated string, quoted name or
// block comment is never complete. Characters the language does not know
// still count as tokens, so a mistyped statement completes and then fails
// with a position instead of waiting for more input forever.
func Complete(text string) bool {
	sc := newScanner(text)
	last := lexer.Token{Type: lexer.EOF}
	for {
		tok, err := sc.next()
		if err != nil {
			return false
		}
		if tok.Type == lexer.EOF {
			return last.Type == tokPunct && last.Value == ";"
		}
		last = tok
	}
}

// StatementSource is the source of one statement found by SplitStatements.
type StatementSource struct {
	// Text runs from the statement's first token through its ';', or
	// through its last token when the input ends without one.
	Text string
	// Start is the position of the first token; End is just past Text.
	Start Position
	End   Position
	// Terminated is false for a last statement without its ';'.
	Terminated bool
}

// SplitStatements cuts text into statements at each ';' outside strings
// and comments, skipping empty statements, without parsing them. It
// returns the statements found before an unterminated string, quoted name
// or block comment together with that error.
func SplitStatements(text string) ([]StatementSource, error) {
	var out []StatementSource
	sc := newScanner(text)
	var first *lexer.Token
	var firstTok, lastTok lexer.Token
	emit := func(end lexer.Token, terminated bool) {
		start := fromLexerPos(firstTok.Pos)
		endPos := fromLexerPos(end.Pos).advance(end.Value)
		out = append(out, StatementSource{
			Text:       text[start.Offset:endPos.Offset],
			Start:      start,
			End:        endPos,
			Terminated: terminated,
		})
		first = nil
	}
	for {
		tok, err := sc.next()
		if err != nil {
			return out, err
		}
		switch {
		case tok.Type == lexer.EOF:
			if first != nil {
				emit(lastTok, false)
			}
			return out, nil
		case tok.Type == tokPunct && tok.Value == ";":
			if first != nil {
				emit(tok, true)
			}
		default:
			if first == nil {
				firstTok = tok
				first = &firstTok
			}
			lastTok = tok
		}
	}
}
