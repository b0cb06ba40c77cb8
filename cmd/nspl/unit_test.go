package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o options)
		wantErr error
	}{
		{name: "nothing", args: nil, check: func(t *testing.T, o options) {
			require.Empty(t, o.sources)
			require.Equal(t, formatTable, o.format)
			require.False(t, o.clock)
		}},
		{name: "sources keep their order", args: []string{"-f", "a.nspl", "-c", "LIST DOMAINS;", "-f", "-", "--f", "b.nspl"},
			check: func(t *testing.T, o options) {
				require.Equal(t, []scriptSource{
					{kind: sourceFile, arg: "a.nspl"},
					{kind: sourceCommand, arg: "LIST DOMAINS;"},
					{kind: sourceStdin, arg: "-"},
					{kind: sourceFile, arg: "b.nspl"},
				}, o.sources)
			}},
		{name: "flags", args: []string{"--continue-on-error", "--echo", "--format", "JSON", "--data-dir", "/d"},
			check: func(t *testing.T, o options) {
				require.True(t, o.continueOnError)
				require.True(t, o.echo)
				require.Equal(t, formatJSON, o.format)
				require.Equal(t, "/d", o.dataDir)
			}},
		{name: "flags before clock survive it", args: []string{"--data-dir", "/d", "--echo", "--format", "json", "--verbose", "--continue-on-error", "clock", "--until-tick", "2"},
			check: func(t *testing.T, o options) {
				require.True(t, o.clock)
				require.Equal(t, "/d", o.dataDir)
				require.True(t, o.echo)
				require.True(t, o.verbose)
				require.True(t, o.continueOnError)
				require.Equal(t, formatJSON, o.format)
				require.Equal(t, uint64(2), o.untilTick)
			}},
		{name: "clock flags override flags before it", args: []string{"--data-dir", "/d", "clock", "--data-dir", "/e"},
			check: func(t *testing.T, o options) {
				require.Equal(t, "/e", o.dataDir)
			}},
		{name: "plain format", args: []string{"--format=plain"}, check: func(t *testing.T, o options) {
			require.Equal(t, formatPlain, o.format)
		}},
		{name: "clock", args: []string{"-f", "setup.nspl", "clock", "--domain", "prod", "--until-tick", "3", "--timeout", "5s", "-c", "USE prod;"},
			check: func(t *testing.T, o options) {
				require.True(t, o.clock)
				require.Equal(t, "prod", o.clockDomain)
				require.Equal(t, uint64(3), o.untilTick)
				require.Equal(t, 5*time.Second, o.clockTimeout)
				require.Len(t, o.sources, 2)
				require.Equal(t, sourceCommand, o.sources[1].kind)
			}},
		{name: "zero timeout is no limit", args: []string{"clock", "--timeout", "0"}, check: func(t *testing.T, o options) {
			require.Zero(t, o.clockTimeout)
		}},
		{name: "help", args: []string{"--help"}, wantErr: flag.ErrHelp},
		{name: "short help", args: []string{"-h"}, wantErr: flag.ErrHelp},
		{name: "clock help", args: []string{"clock", "--help"}, wantErr: flag.ErrHelp},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: ErrUsage},
		{name: "bad format", args: []string{"--format", "xml"}, wantErr: ErrUsage},
		{name: "empty file name", args: []string{"-f", ""}, wantErr: ErrUsage},
		{name: "missing flag value", args: []string{"-c"}, wantErr: ErrUsage},
		{name: "stray argument", args: []string{"LIST", "DOMAINS"}, wantErr: ErrUsage},
		{name: "clock stray argument", args: []string{"clock", "prod"}, wantErr: ErrUsage},
		{name: "negative timeout", args: []string{"clock", "--timeout", "-1s"}, wantErr: ErrUsage},
		{name: "negative tick count", args: []string{"clock", "--until-tick", "-1"}, wantErr: ErrUsage},
		{name: "clock unknown flag", args: []string{"clock", "--follow"}, wantErr: ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(tt.args)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if errors.Is(tt.wantErr, ErrUsage) {
					require.Equal(t, ExitUsage, ExitCode(err))
				}
				return
			}
			require.NoError(t, err)
			tt.check(t, o)
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&RunError{Kind: ErrStatementFailed}, ExitFailed},
		{&RunError{Kind: ErrStatementFailed, Err: ErrClockTimeout}, ExitFailed},
		{usageErrorf("bad"), ExitUsage},
		{ioError(errors.New("disk")), ExitIO},
		{errors.New("anything else"), ExitFailed},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ExitCode(tt.err), "%v", tt.err)
	}
	require.True(t, reported(&RunError{Kind: ErrStatementFailed, Reported: true}))
	require.False(t, reported(usageErrorf("x")))
}

func TestDiagnostic(t *testing.T) {
	tests := []struct {
		name string
		d    diagnostic
		want string
	}{
		{
			name: "file, line and caret",
			d:    diagnostic{File: "setup.nspl", Source: "USE a;\nLIST  DOMAIN;\n", Pos: grammar.Position{Offset: 13, Line: 2, Column: 7}, Msg: "expected DOMAINS, found DOMAIN"},
			want: "setup.nspl:2:7: error: expected DOMAINS, found DOMAIN\nLIST  DOMAIN;\n      ^\n",
		},
		{
			name: "column one",
			d:    diagnostic{File: "-c", Source: "STOP;", Pos: grammar.Position{Line: 1, Column: 1}, Msg: "no active domain"},
			want: "-c:1:1: error: no active domain\nSTOP;\n^\n",
		},
		{
			name: "tabs are copied so the caret lines up",
			d:    diagnostic{Source: "\tSTART AT 'x';", Pos: grammar.Position{Offset: 10, Line: 1, Column: 11}, Msg: "invalid timestamp"},
			want: "1:11: error: invalid timestamp\n\tSTART AT 'x';\n\t         ^\n",
		},
		{
			name: "multi-byte characters count once",
			d:    diagnostic{Source: "USE `é`; x", Pos: grammar.Position{Offset: 10, Line: 1, Column: 10}, Msg: "m"},
			want: "1:10: error: m\nUSE `é`; x\n         ^\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, tt.d.write(&b))
			require.Equal(t, tt.want, b.String())
		})
	}
}

func TestShiftPosition(t *testing.T) {
	start := grammar.Position{Offset: 20, Line: 3, Column: 5}
	require.Equal(t, grammar.Position{Offset: 20, Line: 3, Column: 5}, shiftPosition(start, grammar.Position{Offset: 0, Line: 1, Column: 1}))
	require.Equal(t, grammar.Position{Offset: 27, Line: 3, Column: 12}, shiftPosition(start, grammar.Position{Offset: 7, Line: 1, Column: 8}))
	require.Equal(t, grammar.Position{Offset: 35, Line: 4, Column: 3}, shiftPosition(start, grammar.Position{Offset: 15, Line: 2, Column: 3}))
}

func TestStatementDiagnosticPositions(t *testing.T) {
	src := "LIST DOMAINS;\n  START AT NOW TIME RATE 0;\n"
	stmts, err := grammar.SplitStatements(src)
	require.NoError(t, err)
	require.Len(t, stmts, 2)
	_, perr := grammar.ParseStatement(stmts[1].Text)
	require.Error(t, perr)
	d := statementDiagnostic("f.nspl", src, stmts[1].Start, perr)
	require.Equal(t, 2, d.Pos.Line)
	require.Equal(t, 26, d.Pos.Column) // the 0 after TIME RATE
	require.Equal(t, byte('0'), src[d.Pos.Offset])

	// An error without a position points at the statement.
	d = statementDiagnostic("f.nspl", src, stmts[1].Start, errors.New("refused"))
	require.Equal(t, grammar.Position{Offset: 16, Line: 2, Column: 3}, d.Pos)
	require.Equal(t, "refused", d.Msg)
}

func TestCutStatements(t *testing.T) {
	tests := []struct {
		text, ready, rest string
	}{
		{"", "", ""},
		{"   ", "", ""},
		{"-- a comment", "", ""},
		{"LIST DOMAINS;", "LIST DOMAINS;", ""},
		{"LIST DOMAINS; -- done", "LIST DOMAINS; -- done", ""},
		{"LIST DOMAINS", "", "LIST DOMAINS"},
		{"CREATE DOMAIN a;\nCREATE DOMAIN b; USE", "CREATE DOMAIN a;\nCREATE DOMAIN b;", "USE"},
		{"START AT '2030-01-01T00:00:00Z", "", "START AT '2030-01-01T00:00:00Z"},
		{"LIST DOMAINS; /* open", "", "LIST DOMAINS; /* open"},
		{"USE `a;b", "", "USE `a;b"},
		{"STOP; STOP;", "STOP; STOP;", ""},
	}
	for _, tt := range tests {
		ready, rest := cutStatements(tt.text)
		require.Equal(t, tt.ready, ready.Text, "ready of %q", tt.text)
		require.Equal(t, tt.rest, rest, "rest of %q", tt.text)
	}
}

func FuzzCutStatements(f *testing.F) {
	for _, s := range []string{"", "LIST DOMAINS;", "CREATE DOMAIN a;\nUSE", "START AT 'x", "/* ; */ STOP; -- ;", "USE `a;b`; x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cut, rest := cutStatements(text)
		ready := cut.Text
		require.True(t, strings.HasPrefix(text, ready))
		require.True(t, strings.HasSuffix(text, rest))
		require.LessOrEqual(t, len(ready)+len(rest), len(text))
		if ready != "" {
			require.True(t, grammar.Complete(ready), "ready %q", ready)
		}
		_ = historyEntry(text)
	})
}

func TestParseMeta(t *testing.T) {
	none := metaCommand{}
	tests := []struct {
		line   string
		want   metaCommand
		wantOK bool
	}{
		{"help", metaCommand{name: "help"}, true}, {" HELP; ", metaCommand{name: "help"}, true},
		{`\?`, metaCommand{name: "help"}, true}, {`\h`, metaCommand{name: "help"}, true},
		{"exit", metaCommand{name: "exit"}, true}, {"quit;", metaCommand{name: "exit"}, true},
		{`\q`, metaCommand{name: "exit"}, true}, {"EXIT", metaCommand{name: "exit"}, true},
		{`\i setup.nspl`, metaCommand{name: `\i`, arg: "setup.nspl"}, true},
		{`  \i  setup.nspl ;`, metaCommand{name: `\i`, arg: "setup.nspl"}, true},
		{`\timing`, metaCommand{name: `\timing`}, true}, {`\timing off`, metaCommand{name: `\timing`, arg: "off"}, true},
		{`\d`, metaCommand{name: `\d`}, true}, {`\d prod`, metaCommand{name: `\d`, arg: "prod"}, true},
		{"", none, false}, {"LIST DOMAINS;", none, false}, {"helpme", none, false}, {"exit now", none, false},
	}
	for _, tt := range tests {
		got, ok := parseMeta(tt.line)
		require.Equal(t, tt.wantOK, ok, "%q", tt.line)
		require.Equal(t, tt.want, got, "%q", tt.line)
	}
}

func TestHistoryEntry(t *testing.T) {
	tests := []struct{ text, want string }{
		{"LIST DOMAINS;", "LIST DOMAINS;"},
		{"CREATE PACED DOMAIN prod\n  WITH PERIOD 1s\n  SKEW 100ms;", "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;"},
		{"CREATE DOMAIN a -- the archive\n;", "CREATE DOMAIN a ;"},
		{"START AT '2030-01-01T00:00:00Z' // go\n;", "START AT '2030-01-01T00:00:00Z' ;"},
		{"USE `a--b`;", "USE `a--b`;"},
		{"/* a -- b\n */ STOP;", "/* a -- b */ STOP;"},
		{"USE 'it''s -- x';", "USE 'it''s -- x';"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, historyEntry(tt.text), "%q", tt.text)
	}
}

func TestPrompt(t *testing.T) {
	tests := []struct {
		active string
		tx     bool
		want   string
	}{
		{"", false, "nspl> "},
		{"prod", false, "nspl[prod]> "},
		{"prod", true, "nspl[prod]*> "},
		{"prod-1", false, "nspl[`prod-1`]> "},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, promptFor(tt.active, tt.tx))
	}
}

func TestCompleter(t *testing.T) {
	c := statementCompleter{domains: func() []string { return []string{"prod", "archive", "prod-1"} }}
	tests := []struct {
		pending, line string
		want          []string
		length        int
	}{
		{"", "CRE", []string{"ATE "}, 3},
		{"", "cre", []string{"ate "}, 3},
		{"", "CREATE PA", []string{"CED "}, 2},
		{"", "USE ", []string{"archive ", "prod ", "`prod-1` "}, 0},
		{"", "USE pr", []string{"od "}, 2},
		{"CREATE PACED DOMAIN x", "WITH ", []string{"PERIOD "}, 0},
		{"", "DROP DOMAIN ", []string{"IF ", "archive ", "prod ", "`prod-1` "}, 0},
		{"", "LIST DOMAINS; ST", []string{"ART ", "OP "}, 2},
		{"", "START AT 'x", nil, 0},
		{"", "USE `pr", []string{"od` ", "od-1` "}, 3},
		{"", "USE `PROD-", []string{"1` "}, 6},
		{"", "DROP DOMAIN IF EXISTS `", []string{"archive` ", "prod` ", "prod-1` "}, 1},
	}
	for _, tt := range tests {
		c.pending = func() string { return tt.pending }
		line := []rune(tt.line)
		got, n := c.Do(line, len(line))
		var words []string
		for _, g := range got {
			words = append(words, string(g))
		}
		require.Equal(t, tt.want, words, "%q + %q", tt.pending, tt.line)
		if len(tt.want) > 0 {
			require.Equal(t, tt.length, n, "%q", tt.line)
		}
	}
	got, n := c.Do([]rune("CRE"), 99)
	require.Nil(t, got)
	require.Zero(t, n)
}

func FuzzDiagnostic(f *testing.F) {
	f.Add("USE a;\nLIST  DOMAIN;\n", 13, 2, 7)
	f.Add("\tSTART AT 'x';", 10, 1, 11)
	f.Add("USE `é`; x", 10, 1, 10)
	f.Add("", 0, 1, 1)
	f.Fuzz(func(t *testing.T, src string, offset, line, col int) {
		d := diagnostic{File: "f", Source: src, Pos: grammar.Position{Offset: offset, Line: line, Column: col}, Msg: "m"}
		var b bytes.Buffer
		require.NoError(t, d.write(&b))
		require.True(t, strings.HasPrefix(b.String(), "f:"))
	})
}

func TestServeMaxClockOffset(t *testing.T) {
	base := []string{"--node", "n1", "--api-addr", "127.0.0.1:7000", "--insecure"}
	cases := []struct {
		name string
		args []string
		want time.Duration
		err  string
	}{
		{"the default", nil, 500 * time.Millisecond, ""},
		{"set", []string{"--max-clock-offset", "2s"}, 2 * time.Second, ""},
		{"negative", []string{"--max-clock-offset", "-1s"}, 0, "--max-clock-offset -1s is negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseServeArgs(options{}, append(append([]string(nil), base...), c.args...))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, o.serve.maxClockOffset)
		})
	}
}
