package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEndOfInputPosition reports a missing statement at the position just
// past the whole input: the line after its last line break, and the column
// after what follows that break, whatever comes before it.
func TestEndOfInputPosition(t *testing.T) {
	for _, tc := range []struct{ src, pos string }{
		{"", "1:1"},
		{"  ", "1:3"},
		{"\n", "2:1"},
		{"\n  ", "2:3"},
		{"-- é\n\n -- é", "3:6"},
	} {
		_, err := ParseStatement(tc.src)
		require.EqualError(t, err, tc.pos+": expected a statement, found end of input", "%q", tc.src)
	}
}

// TestNodeText returns a node's source text, and "" for an extent that does
// not lie inside the source given.
func TestNodeText(t *testing.T) {
	src := "USE prod"
	at := func(start, end int) Node {
		return Node{Start: Position{Offset: start}, End: Position{Offset: end}}
	}
	for _, tc := range []struct {
		name string
		n    Node
		want string
	}{
		{"the whole source", at(0, len(src)), src},
		{"ending at the end", at(4, len(src)), "prod"},
		{"empty", at(3, 3), ""},
		{"starting before the source", at(-1, 3), ""},
		{"ending past the source", at(4, len(src)+1), ""},
		{"ending before it starts", at(4, 3), ""},
	} {
		require.Equal(t, tc.want, tc.n.Text(src), tc.name)
	}
}
