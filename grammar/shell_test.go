package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestComplete(t *testing.T) {
	for text, want := range map[string]bool{
		"":                         false,
		"START":                    false,
		"START;":                   true,
		";":                        true,
		"START;  \n\t":             true,
		"START; -- go":             true,
		"START; /* done */":        true,
		"START; /* open":           false,
		"START; STOP":              false,
		"START AT ';'":             false,
		"START AT ';';":            true,
		"START AT \"x;":            false,
		"USE `a;":                  false,
		"USE `a;`;":                true,
		"-- STOP;":                 false,
		"/* STOP; */":              false,
		"START // ;":               false,
		"STOP @;":                  true,
		"START AT NOW TIME RATE +": false, // only ';' ends a statement
		"USE a,":                   false,
		"CREATE PACED DOMAIN p\n WITH PERIOD 1s SKEW 0\n;\n": true,
	} {
		require.Equal(t, want, Complete(text), "%q", text)
	}
}

func TestSplitStatements(t *testing.T) {
	src := "-- head\nSTART;; USE `a;b`;\n  CREATE DOMAIN x /* c */ ;STOP"
	got, err := SplitStatements(src)
	require.NoError(t, err)
	require.Equal(t, []StatementSource{
		{Text: "START;", Start: Position{8, 2, 1}, End: Position{14, 2, 7}, Terminated: true},
		{Text: "USE `a;b`;", Start: Position{16, 2, 9}, End: Position{26, 2, 19}, Terminated: true},
		{Text: "CREATE DOMAIN x /* c */ ;", Start: Position{29, 3, 3}, End: Position{54, 3, 28}, Terminated: true},
		{Text: "STOP", Start: Position{54, 3, 28}, End: Position{58, 3, 32}, Terminated: false},
	}, got)
	for _, s := range got {
		require.Equal(t, s.Text, src[s.Start.Offset:s.End.Offset])
	}

	got, err = SplitStatements("STOP; START AT 'x")
	require.EqualError(t, err, "1:16: unterminated string: close it with '")
	require.Len(t, got, 1)

	got, err = SplitStatements("  -- nothing\n;;")
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		prefix   string
		keywords []string
		domain   bool
		newName  bool
		partial  string
	}{
		{"", []string{"ALTER", "ATTACH", "BACKUP", "BEGIN", "COMMIT", "CORDON", "CREATE", "DESCRIBE", "DETACH", "DRAIN", "DROP", "LIST", "RESTORE", "REVERT", "ROLLBACK", "SHOW", "START", "STOP", "UNCORDON", "USE"}, false, false, ""},
		{"CREATE ", []string{"DOMAIN", "IF", "PACED", "UNPACED"}, false, false, ""},
		{"create pa", []string{"PACED"}, false, false, "pa"},
		{"STOP", []string{"STOP"}, false, false, "STOP"}, // a whole keyword still being typed
		{"CREATE PACED", []string{"PACED"}, false, false, "PACED"},
		{"START AT NOW TIME RATE 6", nil, false, false, ""}, // a number is not a word to complete
		{"CREATE IF ", []string{"NOT"}, false, false, ""},
		{"CREATE PACED DOMAIN ", nil, false, true, ""},
		{"CREATE DOMAIN ", nil, false, true, ""},
		{"CREATE PACED DOMAIN p ", []string{"WITH"}, false, false, ""},
		{"CREATE PACED DOMAIN p WITH PERIOD 1s SKEW 0 ", []string{"PLACEMENT"}, false, false, ""},
		{"CREATE DOMAIN p PLACEMENT ", []string{"NEUTRAL", "PREFER", "REQUIRE", "SUGGEST"}, false, false, ""},
		{"ALTER DOMAIN SET PLACEMENT REQUIRE ", []string{"COLOCATION"}, false, false, ""},
		{"START ", []string{"AT"}, false, false, ""},
		{"START AT ", []string{"NOW"}, false, false, ""},
		{"START AT NOW ", []string{"TIME"}, false, false, ""},
		{"START AT '2026-01-01T00:00:00Z' TIME ", []string{"RATE"}, false, false, ""},
		{"START AT NOW TIME RATE ", nil, false, false, ""},
		{"USE ", nil, true, false, ""},
		{"USE pr", nil, true, false, "pr"},
		{"DROP DOMAIN ", []string{"IF"}, true, false, ""},
		{"DROP DOMAIN IF EXISTS ", nil, true, false, ""},
		{"DESCRIBE DOMAIN ", nil, true, false, ""},
		{"STOP; ST", []string{"START", "STOP"}, false, false, "ST"},
		{"STOP ", nil, false, false, ""},
		{"SHOW ", []string{"ALL", "CLUSTER", "TRANSACTIONS"}, false, false, ""},
		{"show tr", []string{"TRANSACTIONS"}, false, false, "tr"},
		{"SHOW TRANSACTIONS ", nil, false, false, ""},
		{"BOGUS ", nil, false, false, ""},
		{"START AT 'unterminated ", nil, false, false, ""},
		{"USE `", nil, true, false, "`"},
		{"`pro", nil, false, false, "`pro"}, // a name left open at the very start
		{"USE `prod-", nil, true, false, "`prod-"},
		{"DROP DOMAIN IF EXISTS `a``b", nil, true, false, "`a``b"},
		{"CREATE DOMAIN `new-", nil, false, true, "`new-"},
		{"STOP `x", nil, false, false, "`x"},
		{"/* open `x", nil, false, false, ""},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			s := Suggest(tc.prefix)
			require.Equal(t, tc.keywords, s.Keywords)
			require.Equal(t, tc.domain, s.DomainName)
			require.Equal(t, tc.newName, s.NewName)
			require.Equal(t, tc.partial, s.Partial)
			require.Equal(t, tc.keywords, NextKeywords(tc.prefix))
			require.Equal(t, tc.domain, ExpectsDomainName(tc.prefix))
		})
	}
}

func TestSourceLine(t *testing.T) {
	src := "STOP;\r\n  BOGUS x;\nSTART"
	_, err := Parse(src)
	var e *Error
	require.ErrorAs(t, err, &e)
	line, col := SourceLine(src, e.Pos)
	require.Equal(t, "  BOGUS x;", line)
	require.Equal(t, 3, col)

	// A position on a line break belongs to the line it ends, shown alone
	// with the caret just past its text.
	src = "CREATE\nSTOP;"
	line, col = SourceLine(src, Position{Offset: 6, Line: 1, Column: 7})
	require.Equal(t, "CREATE", line)
	require.Equal(t, 7, col)
}

// TestSplitRest holds what a consumer that sends statements elsewhere to be
// parsed relies on: the rest the split cannot cut starts at the statement
// the failure interrupted, and parsing that rest alone fails with the error
// Parse reports for the whole text, at the same place once located.
func TestSplitRest(t *testing.T) {
	for _, src := range []string{
		"STOP; START AT 'x",
		"USE a;\n  FOO BAR 'open",
		"USE a; /* open",
		"USE a;\nUSE `b",
	} {
		t.Run(src, func(t *testing.T) {
			sc := Split(src)
			require.Error(t, sc.Err)
			require.Equal(t, src, sc.Text)
			require.Len(t, sc.Statements, 1)
			require.Equal(t, src[sc.Rest.Start.Offset:], sc.Rest.Text)
			require.False(t, sc.Rest.Terminated)

			_, whole := Parse(src)
			var want *Error
			require.ErrorAs(t, whole, &want)
			_, alone := ParseStatement(sc.Rest.Text)
			var got *Error
			require.ErrorAs(t, alone, &got)
			require.Equal(t, want.Msg, got.Msg)
			require.Equal(t, want.Pos, sc.Rest.Locate(got.Pos))
		})
	}
	sc := Split("USE a;\nSTOP")
	require.NoError(t, sc.Err)
	require.Equal(t, StatementSource{}, sc.Rest)
}

func TestStatementKeywords(t *testing.T) {
	for text, want := range map[string][2]string{
		"LIST DOMAINS LIKE 'a%';":     {"LIST", "DOMAINS"},
		"describe /* c */ backup 'f'": {"DESCRIBE", "BACKUP"},
		"attach domain clock;":        {"ATTACH", "DOMAIN"},
		"STOP;":                       {"STOP", ""},
		"USE prod;":                   {"USE", ""},
		"`list` domains;":             {"", ""},
		"x":                           {"", ""},
		"'open":                       {"", ""},
	} {
		first, second := StatementSource{Text: text}.Keywords()
		require.Equal(t, want, [2]string{first, second}, "%q", text)
	}
}

// TestLocate maps a position a parse of one statement reports to the
// script the statement was cut from, on its first line and after it.
func TestLocate(t *testing.T) {
	src := "USE a;\n  START AT NOW\n  TIME RATE 0;\n"
	sc := Split(src)
	require.Len(t, sc.Statements, 2)
	st := sc.Statements[1]
	_, err := ParseStatement(st.Text)
	var e *Error
	require.ErrorAs(t, err, &e)
	_, whole := Parse(src)
	var want *Error
	require.ErrorAs(t, whole, &want)
	require.Equal(t, want.Pos, st.Locate(e.Pos))
	require.Equal(t, Position{Offset: 9, Line: 2, Column: 3}, st.Locate(Position{Line: 1, Column: 1}))
	require.Equal(t, Position{Offset: 11, Line: 2, Column: 5}, st.Locate(Position{Offset: 2, Line: 1, Column: 3}))
	require.Equal(t, Position{Offset: 25, Line: 3, Column: 3}, st.Locate(Position{Offset: 16, Line: 2, Column: 3}))
}
