package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
)

// diagnostic is one failed statement, ready to print as
//
//	FILE:LINE:COL: error: message
//	<the source line>
//	<spaces>^
//
// Pos is a position in Source, the whole text of the script.
type diagnostic struct {
	File   string // "" in the shell, where the position alone is printed
	Source string
	Pos    grammar.Position
	Msg    string
	Hint   string // a line after the caret saying what to write instead; "" for none
}

// maxDiagnosticLine is the most characters of a source line a diagnostic
// prints: a longer line is cut to a window around the caret, marked with
// "…" where it was cut, so an error in a line of a megabyte prints a line
// a terminal can show.
const maxDiagnosticLine = 120

// write prints d. The caret line copies the tabs of the source line so the
// caret lands under the offending character whatever the tab width.
func (d diagnostic) write(w io.Writer) error {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		b.WriteByte(':')
	}
	// The message may be a server's: termSafe shows its control
	// characters as escapes.
	fmt.Fprintf(&b, "%d:%d: error: %s\n", d.Pos.Line, d.Pos.Column, termSafe(d.Msg))
	line, col := grammar.SourceLine(d.Source, d.Pos)
	if line != "" || col > 0 {
		line, col = lineWindow(line, col, maxDiagnosticLine)
		b.WriteString(line)
		b.WriteByte('\n')
		n := 0
		for _, r := range line {
			if n >= col-1 {
				break
			}
			if r == '\t' {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
			n++
		}
		for ; n < col-1; n++ {
			b.WriteByte(' ')
		}
		b.WriteString("^\n")
	}
	if d.Hint != "" {
		b.WriteString("hint: ")
		b.WriteString(termSafe(d.Hint))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// lineWindow returns at most width characters of line around the 1-based
// character column col, with "…" standing for each cut end, and the column
// of the same character in what it returns. A line of at most width
// characters comes back whole.
func lineWindow(line string, col, width int) (string, int) {
	total := utf8.RuneCountInString(line)
	if total <= width {
		return line, col
	}
	// Keep the caret a third of the way in, so the text after it (what
	// the parser expected to find) gets most of the room.
	first := max(0, min(col-1-width/3, total-width))
	last := first + width // exclusive, in characters
	start, end := len(line), len(line)
	i := 0
	for off := range line {
		if i == first {
			start = off
		}
		if i == last {
			end = off
			break
		}
		i++
	}
	var b strings.Builder
	if first > 0 {
		b.WriteString("…")
		col = col - first + 1
	}
	b.WriteString(line[start:end])
	if last < total {
		b.WriteString("…")
	}
	return b.String(), col
}

// shiftPosition maps pos, a position inside a statement's own text, to the
// script that statement was cut from, given where the statement starts
// (grammar.StatementSource.Locate, which the remote client uses too).
func shiftPosition(stmtStart, pos grammar.Position) grammar.Position {
	return grammar.StatementSource{Start: stmtStart}.Locate(pos)
}

// statementDiagnostic builds the diagnostic of err, raised by the statement
// that starts at stmtStart in source. A positioned error (a syntax error, a
// bad literal, a planner check) points at its own character; any other error
// (an execution failure) points at the start of the statement.
func statementDiagnostic(file, source string, stmtStart grammar.Position, err error) diagnostic {
	d := diagnostic{File: file, Source: source, Pos: stmtStart, Msg: err.Error()}
	if ge := follow.AsStatementError(err); ge != nil {
		d.Pos = shiftPosition(stmtStart, ge.Pos)
		d.Msg = ge.Msg
		if errors.Is(err, grammar.ErrSyntax) {
			d.Hint = backtickHint(source, d.Pos.Offset)
		}
	}
	return d
}

// backtickHint explains a syntax error at offset in source that is a '-'
// or '~' glued to a name (CREATE DOMAIN prod-2;): such a name is only
// written in backticks. It returns "" for any other error.
func backtickHint(source string, offset int) string {
	if offset <= 0 || offset >= len(source) || !strings.ContainsRune("-~", rune(source[offset])) || !bareNameByte(source[offset-1]) {
		return ""
	}
	word := offset // the bare word the '-' or '~' follows must be a name, not a number
	for word > 0 && bareNameByte(source[word-1]) {
		word--
	}
	if c := source[word]; '0' <= c && c <= '9' {
		return ""
	}
	start, end := offset, offset
	for start > 0 && quotedNameByte(source[start-1]) {
		start--
	}
	for end < len(source) && quotedNameByte(source[end]) {
		end++
	}
	return fmt.Sprintf("names with characters outside [A-Za-z0-9_] go in backticks: `%s`", source[start:end])
}

// bareNameByte reports whether c may appear in a name written without
// backticks.
func bareNameByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// quotedNameByte reports whether c may appear in a name written in
// backticks.
func quotedNameByte(c byte) bool { return bareNameByte(c) || c == '-' || c == '~' }
