package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommandLines(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		lines []CommandLine
	}{
		{"none", "USE d;\n", nil},
		{"between statements", "USE d;\n\\sleep 1h\nSTOP;\n",
			[]CommandLine{{Text: `\sleep 1h`, Pos: Position{Offset: 7, Line: 2, Column: 1}}}},
		{"indented, first line, no newline", "  \\wait tick 2",
			[]CommandLine{{Text: `\wait tick 2`, Pos: Position{Offset: 2, Line: 1, Column: 3}}}},
		{"a dot command", ".tables\n", []CommandLine{{Text: ".tables", Pos: Position{Offset: 0, Line: 1, Column: 1}}}},
		{"CRLF", "USE d;\r\n\\x\r\nSTOP;\r\n", []CommandLine{{Text: `\x`, Pos: Position{Offset: 8, Line: 2, Column: 1}}}},
		{"inside a statement", "START AT\n\\sleep 1h\nNOW;\n", nil},
		{"inside a string", "START AT '2030\n\\x\n';\n", nil},
		{"inside a block comment", "/*\n\\x\n*/ USE d;\n", nil},
		{"after a line comment", "-- note\n\\x\n", []CommandLine{{Text: `\x`, Pos: Position{Offset: 8, Line: 2, Column: 1}}}},
		{"a statement's end on the line before", "USE d\n;\n\\x\n", []CommandLine{{Text: `\x`, Pos: Position{Offset: 8, Line: 3, Column: 1}}}},
		{"not at a line's start", "USE d; \\x\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blanked, lines := CommandLines(tc.text)
			require.Equal(t, tc.lines, lines)
			require.Len(t, blanked, len(tc.text), "positions are kept")
			if len(tc.lines) == 0 {
				require.Equal(t, tc.text, blanked)
			}
			for _, cl := range lines {
				require.Equal(t, strings.Repeat(" ", len(cl.Text)), blanked[cl.Pos.Offset:cl.Pos.Offset+len(cl.Text)])
				require.Equal(t, cl.Text, tc.text[cl.Pos.Offset:cl.Pos.Offset+len(cl.Text)])
			}
			require.Equal(t, strings.Count(tc.text, "\n"), strings.Count(blanked, "\n"))
		})
	}
}

func TestFormatKeepsCommandLines(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"between statements", "create domain d;\n   \\sleep 1h\nuse d;\n", "CREATE DOMAIN d;\n\\sleep 1h\nUSE d;\n"},
		{"first and last", "\\set a 1\nuse d;\n\\wait tick 2", "\\set a 1\nUSE d;\n\\wait tick 2\n"},
		{"beside comments", "use d; -- x\n-- own line\n\\x\n/* b */\n", "USE d; -- x\n-- own line\n\\x\n/* b */\n"},
		{"a comment that looks like the marker", "-- nspl-command-line-0\n\\x\n", "-- nspl-command-line-0\n\\x\n"},
		{"inside a statement it is no command", "use\n\\x\nd;\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Format(tc.src)
			if tc.want == "" {
				require.Error(t, err, "a backslash inside a statement is a syntax error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			again, err := Format(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "idempotent")
		})
	}
}
