package grammar

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// continuationIndent starts each continuation line of a statement that a
// comment inside it broke across lines.
const continuationIndent = "    "

// Format returns src in the canonical layout of an .nspl file, or the
// *Error of the first statement that does not parse (src is never
// formatted in part). The layout:
//
//   - Keywords are upper-case; names are printed by FormatName (lower-case,
//     backticks only where needed); strings are single-quoted. Numbers,
//     durations and rates keep their spelling, and so does every clause and
//     keyword choice (CREATE DOMAIN stays short, ROLLBACK stays ROLLBACK):
//     Format changes layout, not what the text says.
//   - Each statement is on a line of its own, tokens one space apart, ended
//     by ';' (added after a last statement without one). Statements that a
//     blank line separated stay separated by exactly one; others follow
//     each other line by line. A stray ';' is dropped.
//   - Every comment is kept, in order, with its text unchanged (a line
//     comment loses trailing white space). A comment that shared a line
//     with what came before it stays on that line (after the statement's
//     ';' when it followed the statement's last token); a comment on a line
//     of its own stays on a line of its own, at column 1 between
//     statements. A comment inside a statement stays between the same two
//     tokens: a line comment there, or one that began its own line, breaks
//     the statement, and the rest continues on a line indented by four
//     spaces.
//   - The result ends with one newline, unless it is empty.
//
// Format is idempotent, Format(Format(src)) == Format(src), and the
// statements of its result parse to the same AST as those of src, positions
// aside.
func Format(src string) (string, error) {
	if blanked, lines := CommandLines(src); len(lines) > 0 {
		return formatWithCommandLines(src, blanked, lines)
	}
	if _, err := Parse(src); err != nil {
		return "", err
	}
	units, err := formatUnits(src)
	if err != nil {
		return "", err
	}
	return layout(src, units), nil
}

type unitKind uint8

const (
	unitToken unitKind = iota
	unitSemicolon
	unitLineComment
	unitBlockComment
)

// unit is one thing the formatter prints: a token in its canonical
// spelling, a statement's ';', or a comment. start and end are byte
// offsets in the source, used to count the newlines between units.
type unit struct {
	kind       unitKind
	text       string
	start, end int
	stmtStart  bool // the statement's first token
	interior   bool // a comment between two tokens of one statement
	sign       bool // a '+' or '-' that the next token follows directly
}

func (u unit) comment() bool { return u.kind == unitLineComment || u.kind == unitBlockComment }

// formatUnits lexes src with its comments and returns what to print, in
// order. Each statement's ';' follows its last token directly; comments
// between the last token and the ';' come after it, and a statement without
// a ';' gets one.
func formatUnits(src string) ([]unit, error) {
	var out, pending []unit
	open := false      // a statement has a token and no ';' yet
	lastEnd := 0       // the end of the open statement's last token
	afterNode := false // the previous token is the keyword NODE
	sc := newScanner(src)
	sc.comment = func(start, end Position) {
		text := src[start.Offset:end.Offset]
		u := unit{kind: unitBlockComment, text: text, start: start.Offset, end: end.Offset}
		if !strings.HasPrefix(text, "/*") {
			u.kind, u.text = unitLineComment, strings.TrimRight(text, " \t\r\f\v")
		}
		if open {
			pending = append(pending, u)
			return
		}
		out = append(out, u)
	}
	closeStatement := func() {
		out = append(out, unit{kind: unitSemicolon, text: ";", start: lastEnd, end: lastEnd})
		out = append(out, pending...)
		pending, open = pending[:0], false
	}
	for {
		tok, lexErr := sc.next()
		if lexErr != nil {
			return nil, lexErr
		}
		switch {
		case tok.Type == lexer.EOF:
			if open {
				closeStatement()
			}
			return out, nil
		case tok.Type == tokPunct && tok.Value == ";":
			if open {
				closeStatement()
			}
		default:
			for _, c := range pending {
				c.interior = true
				out = append(out, c)
			}
			pending = pending[:0]
			start := tok.Pos.Offset
			lastEnd = start + len(tok.Value)
			text := canonicalToken(tok)
			if afterNode {
				text = canonicalNodeName(tok, text)
			}
			afterNode = tok.Type == tokKeyword && tok.Value == "NODE"
			out = append(out, unit{
				kind:      unitToken,
				text:      text,
				start:     start,
				end:       lastEnd,
				stmtStart: !open,
				sign:      tok.Type == tokPunct && (tok.Value == "+" || tok.Value == "-"),
			})
			open = true
		}
	}
}

// canonicalToken returns the spelling Format prints for tok. The lexer
// already gives keywords their canonical spelling.
func canonicalToken(tok lexer.Token) string {
	switch tok.Type {
	case tokIdent, tokQuotedName:
		if name, err := ParseName(tok.Value); err == nil {
			return FormatName(name)
		}
	case tokString:
		return FormatPath(unquote(tok.Value))
	}
	return tok.Value
}

// canonicalNodeName returns the spelling of a node name, the token after
// NODE: its case is kept (node names are case-sensitive), in backquotes
// where it needs them; a token that is no node name keeps text.
func canonicalNodeName(tok lexer.Token, text string) string {
	if tok.Type != tokIdent && tok.Type != tokQuotedName && tok.Type != tokString {
		return text
	}
	name, err := ParseNodeName(tok.Value)
	if err != nil {
		return text
	}
	return FormatNodeName(name)
}

// layout prints units by the rules in Format's doc comment.
func layout(src string, units []unit) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/8)
	lineHasStatement := false
	newline := func(blank bool) {
		b.WriteByte('\n')
		if blank {
			b.WriteByte('\n')
		}
		lineHasStatement = false
	}
	for i, u := range units {
		if i > 0 {
			prev := units[i-1]
			gap := src[prev.end:u.start]
			breaks := strings.Count(gap, "\n")
			blank := breaks > 1 && hasBlankLine(gap)
			mustBreak := prev.kind == unitLineComment
			switch {
			case u.kind == unitSemicolon:
			case u.kind == unitToken && u.stmtStart:
				if mustBreak || breaks > 0 || lineHasStatement {
					newline(blank)
				} else {
					b.WriteByte(' ')
				}
			case u.kind == unitToken || u.interior:
				switch {
				case mustBreak || (u.interior && breaks > 0):
					newline(false)
					b.WriteString(continuationIndent)
				case prev.sign && !u.comment():
				default:
					b.WriteByte(' ')
				}
			default: // a comment between statements
				if mustBreak || breaks > 0 {
					newline(blank)
				} else {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString(u.text)
		if !u.comment() {
			lineHasStatement = true
		}
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

// hasBlankLine reports whether gap, the text between two units, holds a
// line with nothing but white space on it (a stray ';' is not nothing).
func hasBlankLine(gap string) bool {
	lines := strings.Split(gap, "\n")
	for _, l := range lines[1 : len(lines)-1] {
		if strings.TrimLeft(l, " \t\r\f\v") == "" {
			return true
		}
	}
	return false
}

// formatWithCommandLines is Format of a script with command lines
// (CommandLines): each stands in for a line comment of its own while the
// statements are laid out, a comment of its own line staying on a line of
// its own between the same statements, and is then written back as it was,
// without its indentation. The comment's text is a marker found nowhere in
// src, so no comment of the script is taken for one.
func formatWithCommandLines(src, blanked string, lines []CommandLine) (string, error) {
	if _, err := Parse(blanked); err != nil {
		return "", err
	}
	prefix := "nspl-command-line-"
	for n := 0; strings.Contains(src, prefix); n++ {
		prefix = "nspl-command-line-" + strconv.Itoa(n) + "-"
	}
	var marked strings.Builder
	last := 0
	for i, cl := range lines {
		marked.WriteString(src[last:cl.Pos.Offset])
		marked.WriteString("-- " + prefix + strconv.Itoa(i))
		last = cl.Pos.Offset + len(cl.Text)
	}
	marked.WriteString(src[last:])
	out, err := Format(marked.String())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for line := range strings.Lines(out) {
		body := strings.TrimSuffix(line, "\n")
		if i, ok := strings.CutPrefix(strings.TrimSpace(body), "-- "+prefix); ok {
			if n, err := strconv.Atoi(i); err == nil && n >= 0 && n < len(lines) {
				b.WriteString(lines[n].Text)
				b.WriteString(line[len(body):])
				continue
			}
		}
		b.WriteString(line)
	}
	return b.String(), nil
}
