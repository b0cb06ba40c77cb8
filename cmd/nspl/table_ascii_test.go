package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestASCIITableMatchesTablewriter: the table appendASCIITable draws is
// byte for byte the one tablewriter draws with writeTable's options, and it
// declines (leaving tablewriter to draw) exactly the tables that are not
// all printable ASCII in header-shaped rows.
func TestASCIITableMatchesTablewriter(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		wantOK bool
	}{
		{"no rows", []string{"name", "pace", "status", "generation"}, nil, true},
		{"rows", []string{"name", "pace"}, [][]string{{"a", "UNPACED"}, {"prod-1", "PACED"}}, true},
		{"empty cells", []string{"a", "b"}, [][]string{{"x", ""}, {"", "yy"}}, true},
		{"empty header", []string{""}, nil, true},
		{"all empty", []string{"", ""}, [][]string{{"", ""}}, true},
		{"spaces kept", []string{" "}, [][]string{{"  "}, {"trail  "}, {"  lead"}}, true},
		{"punctuation", []string{"a"}, [][]string{{"~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"}, {"+--+"}, {"| |"}}, true},
		{"column value pairs", []string{"column", "value"}, [][]string{{"name", "a"}, {"period", "NULL"}}, true},
		{"no header", nil, [][]string{{"x"}}, false},
		{"short row", []string{"a", "b"}, [][]string{{"x"}}, false},
		{"long row", []string{"a"}, [][]string{{"x", "y"}}, false},
		{"line break", []string{"a"}, [][]string{{"l1\nl2"}}, false},
		{"line break in header", []string{"a\nb"}, nil, false},
		{"tab", []string{"a"}, [][]string{{"t\tab"}}, false},
		{"carriage return", []string{"a"}, [][]string{{"\r"}}, false},
		{"escape sequence", []string{"a"}, [][]string{{"\x1b[31mred\x1b[0m"}}, false},
		{"delete", []string{"a"}, [][]string{{"\x7f"}}, false},
		{"nul", []string{"a"}, [][]string{{"x\x00y"}}, false},
		{"wide runes", []string{"a"}, [][]string{{"日本語"}}, false},
		{"combining mark", []string{"a"}, [][]string{{"e\u0301"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkASCIITable(t, tt.header, tt.rows, tt.wantOK)
		})
	}
}

// checkASCIITable checks appendASCIITable on header and rows against
// tablewriter and against wantOK.
func checkASCIITable(t *testing.T, header []string, rows [][]string, wantOK bool) {
	t.Helper()
	prefix := []byte("kept:")
	got, ok := appendASCIITable(bytes.Clone(prefix), header, rows)
	require.Equal(t, wantOK, ok)
	if !ok {
		require.Equal(t, prefix, got, "a declined table appends nothing")
		return
	}
	var want strings.Builder
	require.NoError(t, drawTable(&want, header, rows))
	require.Equal(t, string(prefix)+want.String(), string(got))
}

// FuzzASCIITable: cells are the input split at NUL, the first ncols the
// header and the rest rows of ncols (a last short row included).
func FuzzASCIITable(f *testing.F) {
	f.Add(uint8(2), "name\x00pace\x00a\x00UNPACED")
	f.Add(uint8(1), "")
	f.Add(uint8(3), "a\x00\x00c\x00|\x00+\x00-\x00 \x00  \x00x")
	f.Add(uint8(2), "a\x00b\x00日本\x00x")
	f.Add(uint8(1), "a\x00l1\nl2")
	f.Fuzz(func(t *testing.T, ncols uint8, text string) {
		n := int(ncols%8) + 1
		cells := strings.Split(text, "\x00")
		if len(cells) < n {
			cells = append(cells, make([]string, n-len(cells))...)
		}
		header, rest := cells[:n], cells[n:]
		var rows [][]string
		for len(rest) > 0 {
			k := min(n, len(rest))
			rows = append(rows, rest[:k])
			rest = rest[k:]
		}
		wantOK := true
		for _, r := range rows {
			wantOK = wantOK && len(r) == n
		}
		for _, c := range cells {
			wantOK = wantOK && strings.IndexFunc(c, func(r rune) bool { return r < ' ' || r > '~' }) < 0
		}
		checkASCIITable(t, header, rows, wantOK)
	})
}
