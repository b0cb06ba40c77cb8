package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
)

func TestLineWindow(t *testing.T) {
	const width = 10
	for _, tc := range []struct {
		name    string
		line    string
		col     int
		want    string
		wantCol int
	}{
		{name: "at the width", line: "0123456789", col: 5, want: "0123456789", wantCol: 5},
		{name: "one over, caret at the start", line: "0123456789a", col: 1, want: "0123456789…", wantCol: 1},
		{name: "one over, caret at the end", line: "0123456789a", col: 11, want: "…123456789a", wantCol: 11},
		{name: "caret past the end", line: "0123456789abc", col: 14, want: "…3456789abc", wantCol: 12},
		{name: "caret in the middle", line: "0123456789abcdefghij", col: 11, want: "…789abcdefg…", wantCol: 5},
		{name: "multi-byte characters", line: "ééééééééééééééééééééé", col: 12, want: "…éééééééééé…", wantCol: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, col := lineWindow(tc.line, tc.col, width)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.wantCol, col)
		})
	}
}

// TestLongLineDiagnosticIsBounded: an error in a line of a megabyte prints a
// bounded line whose caret is still under the offending text.
func TestLongLineDiagnosticIsBounded(t *testing.T) {
	src := "CREATE DOMAIN " + strings.Repeat("x", 1<<20) + " BOGUS;"
	pos := grammar.Position{Offset: strings.Index(src, "BOGUS"), Line: 1, Column: strings.Index(src, "BOGUS") + 1}
	var b strings.Builder
	require.NoError(t, diagnostic{File: "big.nspl", Source: src, Pos: pos, Msg: "expected ';'"}.write(&b))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, "big.nspl:1:1048592: error: expected ';'", lines[0])
	require.LessOrEqual(t, utf8.RuneCountInString(lines[1]), maxDiagnosticLine+2)
	caret := strings.IndexByte(lines[2], '^')
	require.Equal(t, len(lines[2])-1, caret, "the caret ends its line")
	require.True(t, strings.HasPrefix(string([]rune(lines[1])[caret:]), "BOGUS"), "the caret is under BOGUS: %q", lines[1])
}
