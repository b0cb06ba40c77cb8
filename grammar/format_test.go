package grammar

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// formatCases are sources and their canonical layout; each want is also a
// fixed point of Format.
var formatCases = []struct {
	name, src, want string
}{
	{"empty", "", ""},
	{"white space only", " \n\t\n", ""},
	{"list like keeps its pattern", "list domains   like 'Web-%' -- the web tier", "LIST DOMAINS LIKE 'Web-%'; -- the web tier\n"},
	{"keyword case and spacing", "create   paced domain Prod\n  with period 1s skew 100ms\n  placement require colocation",
		"CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms PLACEMENT REQUIRE COLOCATION;\n"},
	{"one statement per line", "use prod; start at now time rate +2;stop;",
		"USE prod;\nSTART AT NOW TIME RATE +2;\nSTOP;\n"},
	{"blank lines keep groups, collapsed to one", "\n\nBEGIN;\nSTOP;\n\n\n\nCOMMIT;\n\n",
		"BEGIN;\nSTOP;\n\nCOMMIT;\n"},
	{"spellings kept", "create domain a; rollback; revert; start at now; CREATE IF NOT EXISTS UNPACED DOMAIN b",
		"CREATE DOMAIN a;\nROLLBACK;\nREVERT;\nSTART AT NOW;\nCREATE IF NOT EXISTS UNPACED DOMAIN b;\n"},
	{"literals kept, strings single-quoted", `start at "2026-01-01T01:00:00+01:00" time rate 1.5E+2; create paced domain p with period 1h30m skew 0`,
		"START AT '2026-01-01T01:00:00+01:00' TIME RATE 1.5E+2;\nCREATE PACED DOMAIN p WITH PERIOD 1h30m SKEW 0;\n"},
	{"names canonical", "use `Prod`; use `prod-1`; use `Stop`; drop domain if exists `a~b`; describe domain _x",
		"USE prod;\nUSE `prod-1`;\nUSE `stop`;\nDROP DOMAIN IF EXISTS `a~b`;\nDESCRIBE DOMAIN _x;\n"},
	{"paths", `backup domain TO "it's.bak"; restore domain a as b from '~/a.nsplbak' resume dry run; describe backup 'x'`,
		"BACKUP DOMAIN TO 'it''s.bak';\nRESTORE DOMAIN a AS b FROM '~/a.nsplbak' RESUME DRY RUN;\nDESCRIBE BACKUP 'x';\n"},
	{"node maintenance keeps the node name's case", "cordon node Node1; uncordon node `node-a`; drain node 'n-2'; drain node `stop`",
		"CORDON NODE Node1;\nUNCORDON NODE `node-a`;\nDRAIN NODE `n-2`;\nDRAIN NODE `stop`;\n"},
	{"stray semicolons dropped", ";; stop;;; ;", "STOP;\n"},
	{"trailing comment stays on its line", "stop; -- stopped\nstart; // resumed   \r\n",
		"STOP; -- stopped\nSTART; // resumed\n"},
	{"own-line comments stay on their own lines", "  -- first\nstop;\n\n   /* second */\n\nstart;\n-- last",
		"-- first\nSTOP;\n\n/* second */\n\nSTART;\n-- last\n"},
	{"comment before the ';' goes after it", "stop -- done\n;\nstart /* again */;",
		"STOP; -- done\nSTART; /* again */\n"},
	{"comment after a last statement without ';'", "stop -- done", "STOP; -- done\n"},
	{"comment after a trailing line comment gets its own line", "stop -- a\n /* b */ ;",
		"STOP; -- a\n/* b */\n"},
	{"block comment before a statement on its line", "/* x */ stop; /* y */ start;",
		"/* x */ STOP; /* y */\nSTART;\n"},
	{"comments inside a statement", "create paced domain p\n  -- the period\n  with period 1s -- one tick\n  skew /* none */ 0;",
		"CREATE PACED DOMAIN p\n    -- the period\n    WITH PERIOD 1s -- one tick\n    SKEW /* none */ 0;\n"},
	{"sign and comment", "start at now time rate + /* up */ 2", "START AT NOW TIME RATE + /* up */ 2;\n"},
	{"empty block comment", "/**/ stop /**/;", "/**/ STOP; /**/\n"},
	{"multi-line block comment kept verbatim", "/* one\n   two */\nstop;", "/* one\n   two */\nSTOP;\n"},
	{"only comments", "-- a\n\n\n// b", "-- a\n\n// b\n"},
}

func TestFormat(t *testing.T) {
	for _, tc := range formatCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Format(tc.src)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			again, err := Format(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "formatting formatted text changed it")
			requireSameMeaning(t, tc.src, got)
		})
	}
}

func TestFormatErrors(t *testing.T) {
	for _, tc := range []struct {
		src, err string
		kind     error
	}{
		{"STOP;\nSTART AT NOW TIME RATE 2\nSTOP;", "3:1: expected ';', found STOP", ErrSyntax},
		{"STOP; /* open", "1:7: unterminated comment: close it with */", ErrSyntax},
		{"USE `a.b`;", "1:5: invalid domain name '`a.b`': a domain name cannot contain '.'; use '-' or '_' instead", ErrInvalidName},
		{"CREATE PACED DOMAIN p WITH PERIOD 1x SKEW 0;", "", ErrInvalidDuration},
	} {
		t.Run(tc.src, func(t *testing.T) {
			out, err := Format(tc.src)
			require.Empty(t, out)
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.ErrorIs(t, err, tc.kind)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
			}
		})
	}
}

// commentsOf returns the text of every comment in src, in order, as Format
// keeps them (a line comment without trailing white space).
func commentsOf(t *testing.T, src string) []string {
	t.Helper()
	var out []string
	sc := newScanner(src)
	sc.comment = func(start, end Position) {
		text := src[start.Offset:end.Offset]
		if !strings.HasPrefix(text, "/*") {
			text = strings.TrimRight(text, " \t\r\f\v")
		}
		out = append(out, text)
	}
	for {
		tok, err := sc.next()
		require.Nil(t, err)
		if tok.Type == 0 || tok.Type == -1 {
			return out
		}
	}
}

// requireSameMeaning holds that formatted parses to the statements of src,
// positions aside, and keeps its comments in order.
func requireSameMeaning(t *testing.T, src, formatted string) {
	t.Helper()
	want, err := Parse(src)
	require.NoError(t, err)
	got, err := Parse(formatted)
	require.NoError(t, err, formatted)
	for _, st := range want {
		stripNodes(reflect.ValueOf(st))
	}
	for _, st := range got {
		stripNodes(reflect.ValueOf(st))
	}
	require.Equal(t, want, got, formatted)
	require.Equal(t, commentsOf(t, src), commentsOf(t, formatted), formatted)
}

// FuzzFormat checks that whatever parses formats to a fixed point that
// parses to the same statements and keeps every comment in order, and that
// what does not parse is refused with the parser's own error.
func FuzzFormat(f *testing.F) {
	for _, tc := range formatCases {
		f.Add(tc.src)
		f.Add(tc.want)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := Format(src)
		if _, perr := Parse(src); perr != nil {
			require.Equal(t, perr, err)
			return
		}
		require.NoError(t, err)
		again, err := Format(out)
		require.NoError(t, err, out)
		require.Equal(t, out, again, "not a fixed point")
		requireSameMeaning(t, src, out)
	})
}
