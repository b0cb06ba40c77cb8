package grammar

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Position is a place in the source text. Offset counts bytes from 0; Line
// and Column count from 1, and Column counts characters (Unicode code
// points), so a caret printed under the source line lands on the spot.
type Position struct {
	Offset int
	Line   int
	Column int
}

// String returns "LINE:COL".
func (p Position) String() string {
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

// advance returns the position just past text that starts at p.
func (p Position) advance(text string) Position {
	p.Offset += len(text)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		p.Line += strings.Count(text, "\n")
		p.Column = 1 + utf8.RuneCountInString(text[i+1:])
		return p
	}
	p.Column += utf8.RuneCountInString(text)
	return p
}

// Node is the source extent every AST node carries: Start is its first
// byte, End the byte just past its last one. It keeps the parser's sense of
// the word (go/ast's ast.Node, participle's node) rather than a cluster
// node's: every statement type embeds it, so a reader of the grammar meets
// it as "the node's position", and only package grammar names it. The
// serving node is node.Node; the catalog's raft server is catalog.Replica
// and a registered incarnation lifecycle.RegisteredNode.
type Node struct {
	Start Position
	End   Position
}

// Pos returns the position of the node's first character.
func (n Node) Pos() Position { return n.Start }

// EndPos returns the position just past the node's last character.
func (n Node) EndPos() Position { return n.End }

// Text returns the node's source text, given the source it was parsed
// from. It returns "" if src is not that source.
func (n Node) Text(src string) string {
	if n.Start.Offset < 0 || n.End.Offset > len(src) || n.Start.Offset > n.End.Offset {
		return ""
	}
	return src[n.Start.Offset:n.End.Offset]
}

// SourceLine returns the whole line of src that holds pos, without its line
// terminator, and the 1-based character column of pos in it: what a script
// runner needs to print the line and a caret under the offending character.
func SourceLine(src string, pos Position) (line string, column int) {
	off := min(max(pos.Offset, 0), len(src))
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += off
	}
	line = strings.TrimSuffix(src[start:end], "\r")
	return line, 1 + utf8.RuneCountInString(src[start:off])
}
