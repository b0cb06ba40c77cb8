package grammar

import (
	"strings"
)

// CommandLine is a shell command on a line of its own in a script: one of
// psql's backslash commands (\set, \x, \sleep, \wait, …) or one of
// sqlite3's dot commands, which the script runner runs in order with the
// statements around it. It is no statement: the parser never sees it.
type CommandLine struct {
	// Text is the line without its leading blanks and line break.
	Text string
	// Pos is the position of its first character.
	Pos Position
}

// CommandLines finds the command lines of a script: lines whose first
// character other than a space or tab is a backslash or a dot, where a
// statement could start (no statement has begun and not yet ended, and no
// string, quoted name or block comment is open). It returns text with every
// command line blanked (each byte a space, line breaks kept), so that the
// statements keep their positions, and the command lines in order; text
// itself and none when there is no command line.
func CommandLines(text string) (string, []CommandLine) {
	if !hasCommandLineStart(text) {
		return text, nil
	}
	var lines []CommandLine
	var blanked []byte
	pending := "" // the statement that has begun and not ended
	for off, line := 0, 1; off <= len(text); line++ {
		end := strings.IndexByte(text[off:], '\n')
		next := off + end + 1
		if end < 0 {
			end = len(text) - off
			next = len(text) + 1
		}
		l := text[off : off+end]
		t := strings.TrimLeft(l, " \t")
		if pending == "" && (strings.HasPrefix(t, `\`) || strings.HasPrefix(t, ".")) {
			if blanked == nil {
				blanked = []byte(text)
			}
			for i := off; i < off+len(l); i++ {
				if blanked[i] != '\r' {
					blanked[i] = ' '
				}
			}
			col := 1 + len(l) - len(t)
			lines = append(lines, CommandLine{Text: strings.TrimRight(t, "\r"), Pos: Position{Offset: off + col - 1, Line: line, Column: col}})
			off = next
			continue
		}
		pending = unfinished(pending + l + "\n")
		off = next
	}
	if blanked == nil {
		return text, nil
	}
	return string(blanked), lines
}

// hasCommandLineStart reports whether a line of text starts, after spaces
// and tabs, with a backslash or a dot: a cheap test before the scan.
func hasCommandLineStart(text string) bool {
	for line := range strings.Lines(text) {
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, `\`) || strings.HasPrefix(t, ".") {
			return true
		}
	}
	return false
}

// unfinished returns what of text is a statement that has begun and not
// ended ("" when every statement ended with its ';', or there is nothing
// but white space and comments), or all of text inside an unterminated
// string, quoted name or block comment.
func unfinished(text string) string {
	sc := Split(text)
	if sc.Err != nil {
		return text
	}
	n := len(sc.Statements)
	if n == 0 || sc.Statements[n-1].Terminated {
		return ""
	}
	return text[sc.Statements[n-1].Start.Offset:]
}
