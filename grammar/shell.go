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

// StatementSource is the source of one statement found by Split.
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

// Locate maps pos, a position in s.Text (as a parse of s.Text alone
// reports it, from line 1, column 1), to the text s was cut from: what a
// caller needs to point into the user's script at an error found in one of
// its statements, by whichever side parsed it.
func (s StatementSource) Locate(pos Position) Position {
	out := Position{
		Offset: s.Start.Offset + pos.Offset,
		Line:   s.Start.Line + pos.Line - 1,
		Column: pos.Column,
	}
	if pos.Line <= 1 {
		out.Column = s.Start.Column + pos.Column - 1
	}
	return out
}

// Keywords returns the statement's first two tokens in their canonical
// upper case when they are keywords, and "" for a token that is not one
// (or is missing). It lexes those two tokens and nothing more, so a
// consumer can tell which statement this is (an ATTACH, a LIST DOMAINS, a
// DESCRIBE BACKUP) without parsing it: the grammar selects a statement's
// production by these keywords too, so the answer agrees with what a parse
// would find for every statement that parses.
func (s StatementSource) Keywords() (first, second string) {
	sc := newScanner(s.Text)
	for i := range 2 {
		tok, err := sc.next()
		if err != nil || tok.Type != tokKeyword {
			return first, second
		}
		if i == 0 {
			first = tok.Value
		} else {
			second = tok.Value
		}
	}
	return first, second
}

// Script is a text cut once into its statements: the one split the shell,
// the script runner, history and the remote client share, so that no
// consumer cuts a text again to find what it runs or where an error is.
type Script struct {
	// Text is the whole text the statements were cut from; their
	// positions are in it.
	Text string
	// Statements are the non-empty statements, in order.
	Statements []StatementSource
	// Err, when set, is the *Error that ended the split early: an
	// unterminated string, quoted name or block comment. Statements holds
	// the statements before it.
	Err error
	// Rest, when Err is set, is the text the split could not cut, from the
	// first token of the statement the failure interrupted (or from the
	// failure, when that statement had no token before it) to the end of
	// Text. Handed to Parse alone, it fails with the error Parse reports
	// for the whole text there, so a side that parses (a server) can say
	// what is wrong with it. Rest is unterminated.
	Rest StatementSource
}

// Split cuts text into statements at each ';' outside strings and
// comments, skipping empty statements, without parsing them; its cost is
// one pass of the lexer. Cutting stops at an unterminated string, quoted
// name or block comment (Script.Err), keeping the statements before it.
func Split(text string) Script {
	out := Script{Text: text}
	sc := newScanner(text)
	started := false
	var firstTok, lastTok lexer.Token
	emit := func(end lexer.Token, terminated bool) {
		start := fromLexerPos(firstTok.Pos)
		endPos := fromLexerPos(end.Pos).advance(end.Value)
		out.Statements = append(out.Statements, StatementSource{
			Text:       text[start.Offset:endPos.Offset],
			Start:      start,
			End:        endPos,
			Terminated: terminated,
		})
		started = false
	}
	for {
		tok, err := sc.next()
		if err != nil {
			start := err.Pos
			if started {
				start = fromLexerPos(firstTok.Pos)
			}
			out.Err = err
			out.Rest = StatementSource{Text: text[start.Offset:], Start: start, End: start.advance(text[start.Offset:])}
			return out
		}
		switch {
		case tok.Type == lexer.EOF:
			if started {
				emit(lastTok, false)
			}
			return out
		case tok.Type == tokPunct && tok.Value == ";":
			if started {
				emit(tok, true)
			}
		default:
			if !started {
				firstTok = tok
				started = true
			}
			lastTok = tok
		}
	}
}

// SplitStatements is Split for a caller that needs only the statements and
// the error that stopped the cutting.
func SplitStatements(text string) ([]StatementSource, error) {
	s := Split(text)
	return s.Statements, s.Err
}
