package grammar

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stripNodes zeroes every Node in v, so tables can state the meaning of a
// statement without its positions.
func stripNodes(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			stripNodes(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Node{}) {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			stripNodes(v.Field(i))
		}
	}
}

func parseOne(t *testing.T, src string) Statement {
	t.Helper()
	st, err := ParseStatement(src)
	require.NoError(t, err, src)
	stripNodes(reflect.ValueOf(st))
	return st
}

func dur(ns uint64) *Duration          { return &Duration{Nanos: ns} }
func pol(p Placement) *PlacementPolicy { return &PlacementPolicy{Policy: p} }

func TestParseStatementForms(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Statement
	}{
		{"CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;",
			&CreateDomain{Pace: Paced, Name: Name{Value: "prod"}, Period: dur(Second), Skew: dur(100 * Millisecond)}},
		{"create paced domain Prod with period 1s skew 0 placement require colocation",
			&CreateDomain{Pace: Paced, Name: Name{Value: "prod"}, Period: dur(Second), Skew: dur(0), Placement: pol(RequireColocation)}},
		{"CREATE IF NOT EXISTS PACED DOMAIN `p-1` WITH PERIOD 1h30m SKEW 1.5s PLACEMENT PREFER COLOCATION;",
			&CreateDomain{IfNotExists: true, Pace: Paced, Name: Name{Value: "p-1"}, Period: dur(Hour + 30*Minute), Skew: dur(1500 * Millisecond), Placement: pol(PreferColocation)}},
		{"CREATE UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;",
			&CreateDomain{Pace: Unpaced, Name: Name{Value: "archive"}, Placement: pol(SuggestSeparation)}},
		{"CREATE IF NOT EXISTS UNPACED DOMAIN a",
			&CreateDomain{IfNotExists: true, Pace: Unpaced, Name: Name{Value: "a"}}},
		{"CREATE DOMAIN a PLACEMENT NEUTRAL",
			&CreateDomain{Pace: Unpaced, Short: true, Name: Name{Value: "a"}, Placement: pol(Neutral)}},
		{"CREATE IF NOT EXISTS DOMAIN a",
			&CreateDomain{IfNotExists: true, Pace: Unpaced, Short: true, Name: Name{Value: "a"}}},
		{"ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;", &AlterPlacement{Placement: PlacementPolicy{Policy: PreferColocation}}},
		{"ALTER DOMAIN SET PLACEMENT NEUTRAL", &AlterPlacement{Placement: PlacementPolicy{Policy: Neutral}}},
		{"START;", &Start{}},
		{"START AT NOW;", &Start{Now: true}},
		{"START AT NOW TIME RATE 60;", &Start{Now: true, Rate: &Rate{Value: 60}}},
		{"START AT '2026-01-01T00:00:00Z';", &Start{At: &Timestamp{UnixNanos: 1767225600e9}}},
		{`START AT "2026-01-01T00:00:00Z" TIME RATE 0.5`, &Start{At: &Timestamp{UnixNanos: 1767225600e9}, Rate: &Rate{Value: 0.5}}},
		{"START AT NOW TIME RATE 5e-324", &Start{Now: true, Rate: &Rate{Value: math.SmallestNonzeroFloat64}}},
		{"START AT NOW TIME RATE 1.7976931348623157E+308", &Start{Now: true, Rate: &Rate{Value: math.MaxFloat64}}},
		{"START AT NOW TIME RATE +2", &Start{Now: true, Rate: &Rate{Value: 2}}},
		{"STOP;", &Stop{}},
		{"ATTACH DOMAIN CLOCK;", &AttachClock{}},
		{"detach domain clock", &DetachClock{}},
		{"USE prod;", &Use{Name: Name{Value: "prod"}}},
		{"USE `clock`", &Use{Name: Name{Value: "clock"}}},
		{"USE zZ_a", &Use{Name: Name{Value: "zz_a"}}}, // the letters at both ends of the alphabet
		{"LIST DOMAINS;", &ListDomains{}},
		{"LIST DOMAINS LIKE 'Web-%';", &ListDomains{Like: &Pattern{Value: "web-%"}}},
		{`list domains like "a\_b"`, &ListDomains{Like: &Pattern{Value: `a\_b`}}},
		{"DESCRIBE DOMAIN;", &DescribeDomain{}},
		{"DESCRIBE DOMAIN prod", &DescribeDomain{Name: &Name{Value: "prod"}}},
		{"DROP DOMAIN prod;", &DropDomain{Name: Name{Value: "prod"}}},
		{"DROP DOMAIN IF EXISTS prod;", &DropDomain{IfExists: true, Name: Name{Value: "prod"}}},
		{"BEGIN;", &Begin{}},
		{"SHOW CLUSTER STATUS;", &ShowClusterStatus{}},
		{"show transactions", &ShowTransactions{}},
		{"SHOW TRANSACTIONS;", &ShowTransactions{}},
		{"show all transactions", &ShowTransactions{All: true}},
		{"COMMIT;", &Commit{}},
		{"REVERT;", &Rollback{Keyword: "REVERT"}},
		{"rollback", &Rollback{Keyword: "ROLLBACK"}},
		{"START AT '2016-12-31T23:59:60Z'", &Start{At: &Timestamp{UnixNanos: 1483228800e9}}},
		{"CREATE PACED DOMAIN m WITH PERIOD 1M SKEW 1m", &CreateDomain{Pace: Paced, Name: Name{Value: "m"}, Period: dur(Month), Skew: dur(Minute)}},
		{"CREATE PACED DOMAIN x WITH PERIOD 18446744073709551615ns SKEW 18446744073709551615ns",
			&CreateDomain{Pace: Paced, Name: Name{Value: "x"}, Period: dur(math.MaxUint64), Skew: dur(math.MaxUint64)}},
		{"START AT '" + MinTimestampText + "'", &Start{At: &Timestamp{UnixNanos: math.MinInt64}}},
		{"START AT '" + MaxTimestampText + "'", &Start{At: &Timestamp{UnixNanos: math.MaxInt64}}},
		{"/* lead */ STOP -- trailing\n", &Stop{}},
		{"// line\nSTOP // more", &Stop{}},
	} {
		t.Run(tc.src, func(t *testing.T) {
			require.Equal(t, tc.want, parseOne(t, tc.src))
		})
	}
}

// errorCases hold one bad input each, the position of the error and the
// sentinel and message it must carry.
var errorCases = []struct {
	src  string
	pos  string
	kind error
	msg  string
}{
	// Syntax: each statement says what it expected.
	{"CREATE PACED DOMAIN prod WITH SKEW 1s;", "1:31", ErrSyntax, "expected PERIOD, found SKEW"},
	{"CREATE PACED DOMAIN prod;", "1:25", ErrSyntax, "expected WITH, found ';'"},
	{"CREATE PACED DOMAIN prod WITH PERIOD 1s", "1:40", ErrSyntax, "expected SKEW, found end of input"},
	{"CREATE PACED DOMAIN prod WITH PERIOD SKEW 1s", "1:38", ErrSyntax, "expected a duration such as 250ms, found SKEW"},
	{"CREATE", "1:7", ErrSyntax, "expected DOMAIN, IF, PACED or UNPACED, found end of input"},
	{"CREATE PACED", "1:13", ErrSyntax, "expected DOMAIN, found end of input"},
	{"CREATE UNPACED", "1:15", ErrSyntax, "expected DOMAIN, found end of input"},
	{"CREATE PACED DOMAIN a WITH PERIOD 1s SKEW", "1:42", ErrSyntax, "expected a duration such as 250ms, found end of input"},
	{"CREATE DOMAIN a PLACEMENT x", "1:27", ErrSyntax, "expected NEUTRAL, PREFER, REQUIRE or SUGGEST, found 'x'"},
	{"ALTER DOMAIN SET PLACEMENT;", "1:27", ErrSyntax, "expected NEUTRAL, PREFER, REQUIRE or SUGGEST, found ';'"},
	{"START AT NOW TIME RATE -", "1:25", ErrSyntax, "expected a number such as 60, found end of input"},
	{"START AT NOW TIME RATE;", "1:23", ErrSyntax, "expected a number such as 60, found ';'"},
	{"START AT NOW TIME RATE ,5", "1:24", ErrSyntax, "expected a number such as 60, found ','"},   // only + and - sign a rate
	{"START AT NOW TIME RATE 5.", "1:25", ErrSyntax, "expected ';', found '.'"},                   // a '.' ending the input takes no digit
	{"START AT NOW TIME RATE 5.;", "1:25", ErrSyntax, "expected ';', found '.'"},                  // a '.' without a digit after it is not a fraction
	{"START AT NOW TIME RATE 1e", "1:24", ErrSyntax, "expected a number such as 60, found '1e'"},  // an exponent mark ending the input
	{"START AT NOW TIME RATE 1e+", "1:24", ErrSyntax, "expected a number such as 60, found '1e'"}, // an exponent sign ending the input
	{"SHOW CLUSTER", "1:13", ErrSyntax, "expected STATUS, found end of input"},
	{"REVERT x", "1:8", ErrSyntax, "expected ';', found 'x'"},
	{"CREATE IF EXISTS DOMAIN a", "1:11", ErrSyntax, "expected NOT, found EXISTS"},
	{"CREATE DOMAIN a PLACEMENT", "1:26", ErrSyntax, "expected NEUTRAL, PREFER, REQUIRE or SUGGEST, found end of input"},
	{"CREATE DOMAIN a PLACEMENT REQUIRE SEPARATION", "1:35", ErrSyntax, "expected COLOCATION, found SEPARATION"},
	{"CREATE DOMAIN a WITH PERIOD 1s", "1:17", ErrSyntax, "expected PLACEMENT or ';', found WITH"},
	{"CREATE DOMAIN", "1:14", ErrSyntax, "expected a domain name, found end of input"},
	{"CREATE DOMAIN clock", "1:15", ErrSyntax, "expected a domain name, found CLOCK (CLOCK is a keyword; write `clock` in backticks to use it as a name)"},
	{`CREATE DOMAIN "x"`, "1:15", ErrSyntax, "(quotes make a text literal; a name is written bare or in backticks: `x`)"},
	{"USE 'prod'", "1:5", ErrSyntax, "(quotes make a text literal; a name is written bare or in backticks: `prod`)"},
	{"ALTER DOMAIN prod SET PLACEMENT NEUTRAL", "1:14", ErrSyntax, "expected SET, found 'prod'"},
	{"ALTER DOMAIN SET PLACEMENT", "1:27", ErrSyntax, "expected NEUTRAL, PREFER, REQUIRE or SUGGEST, found end of input"},
	{"START NOW", "1:7", ErrSyntax, "expected AT or ';', found NOW"},
	{"START AT 2026-01-01T00:00:00Z", "1:10", ErrSyntax, "expected NOW or a quoted RFC 3339 timestamp such as '2026-01-01T00:00:00Z', found '2026'"},
	{"START AT NOW TIME 2", "1:19", ErrSyntax, "expected RATE, found '2'"},
	{"START AT NOW TIME RATE", "1:23", ErrSyntax, "expected a number such as 60, found end of input"},
	{"START TIME RATE 2", "1:7", ErrSyntax, "expected AT or ';', found TIME"},
	{"STOP NOW", "1:6", ErrSyntax, "expected ';', found NOW"},
	{"START STOP", "1:7", ErrSyntax, "expected AT or ';', found STOP"},
	{"ATTACH CLOCK", "1:8", ErrSyntax, "expected DOMAIN, found CLOCK"},
	{"DETACH DOMAIN", "1:14", ErrSyntax, "expected CLOCK, found end of input"},
	{"USE;", "1:4", ErrSyntax, "expected a domain name, found ';'"},
	{"USE a b", "1:7", ErrSyntax, "expected ';', found 'b'"},
	{"LIST DOMAIN", "1:6", ErrSyntax, "expected DOMAINS, found DOMAIN"},
	{"DESCRIBE prod", "1:10", ErrSyntax, "expected BACKUP, DOMAIN or TRANSACTION, found 'prod'"},
	{"DESCRIBE DOMAIN a b", "1:19", ErrSyntax, "found 'b'"},
	{"DROP DOMAIN IF prod", "1:16", ErrSyntax, "expected EXISTS, found 'prod'"},
	{"DROP DOMAIN", "1:12", ErrSyntax, "expected IF or a domain name, found end of input"},
	{"BEGIN WORK", "1:7", ErrSyntax, "expected ';', found 'WORK'"},
	{"SHOW", "1:5", ErrSyntax, "expected ALL, CLUSTER or TRANSACTIONS, found end of input"},
	{"SHOW TRANSACTION", "1:6", ErrSyntax, "expected ALL, CLUSTER or TRANSACTIONS, found TRANSACTION"},
	{"SHOW TRANSACTIONS prod", "1:19", ErrSyntax, "expected ';', found 'prod'"},
	{"SHOW ALL;", "1:9", ErrSyntax, "expected TRANSACTIONS, found ';'"},
	{"SHOW CLUSTER TRANSACTIONS", "1:14", ErrSyntax, "expected STATUS, found TRANSACTIONS"},
	{"USE transactions", "1:5", ErrSyntax, "(TRANSACTIONS is a keyword; write `transactions` in backticks to use it as a name)"},
	{"prod", "1:1", ErrSyntax, "expected ALTER, ATTACH, BACKUP, BEGIN, COMMIT, CORDON, CREATE, DESCRIBE, DETACH, DRAIN, DROP, LIST, RESTORE, REVERT, ROLLBACK, SHOW, START, STOP, UNCORDON or USE, found 'prod'"},
	{"STOP;\n  STRAT;", "2:3", ErrSyntax, "found 'STRAT'"},
	{"START AT 'x", "1:10", ErrSyntax, "unterminated string: close it with '"},
	{"USE `x", "1:5", ErrSyntax, "unterminated quoted name: close it with `"},
	{"STOP; /* open", "1:7", ErrSyntax, "unterminated comment: close it with */"},
	{"STOP @", "1:6", ErrSyntax, "unexpected character '@'"},
	{"START AT 2026-01-01T00:00:00Z", "1:10", ErrSyntax, "found '2026'"}, // the earlier syntax error wins over the later ':'
	{"START AT NOW 'y", "1:14", ErrSyntax, "unterminated string"},
	{"START AT 'x' 'y", "1:10", ErrInvalidTimestamp, "invalid timestamp 'x'"},
	{"STOP; é", "1:7", ErrSyntax, "unexpected character 'é'"},
	// Literals, quoted, at the literal's position.
	{"CREATE PACED DOMAIN p WITH PERIOD 18446744073709551616ns SKEW 0", "1:35", ErrInvalidDuration, "invalid duration '18446744073709551616ns': the spans add up past 18446744073709551615ns"},
	{"CREATE PACED DOMAIN p WITH PERIOD 1s SKEW 18446744073709551615ns1ns", "1:43", ErrInvalidDuration, "add up past"},
	{"CREATE PACED DOMAIN p WITH PERIOD 5 SKEW 0", "1:35", ErrInvalidDuration, "invalid duration '5': missing unit"},
	{"CREATE PACED DOMAIN p WITH PERIOD 1x SKEW 0", "1:35", ErrInvalidDuration, "unknown unit 'x'"},
	{"CREATE PACED DOMAIN p WITH PERIOD 1e3s SKEW 0", "1:35", ErrInvalidDuration, "invalid duration '1e3s'"},
	{"START AT '1677-09-21T00:12:43.145224191Z'", "1:10", ErrInvalidTimestamp, "invalid timestamp '1677-09-21T00:12:43.145224191Z': outside the signed Unix-nanosecond range"},
	{"START AT '2262-04-11T23:47:16.854775808Z'", "1:10", ErrInvalidTimestamp, "outside the signed Unix-nanosecond range"},
	{"START AT '2026-02-30T00:00:00Z'", "1:10", ErrInvalidTimestamp, "day out of range"},
	{"START AT 'yesterday' TIME RATE 1", "1:10", ErrInvalidTimestamp, "invalid timestamp 'yesterday'"},
	{"START AT NOW TIME RATE 0", "1:24", ErrInvalidRate, "invalid time rate '0': must be positive, not zero"},
	{"START AT NOW TIME RATE -1", "1:24", ErrInvalidRate, "invalid time rate '-1': must be positive"},
	{"START AT NOW TIME RATE 1e309", "1:24", ErrInvalidRate, "invalid time rate '1e309': overflows float64"},
	{"START AT NOW TIME RATE NaN", "1:24", ErrInvalidRate, "invalid time rate 'NaN': not a number"},
	{"START AT NOW TIME RATE inf", "1:24", ErrInvalidRate, "invalid time rate 'inf': infinite"},
	{"START AT NOW TIME RATE 2e-324", "1:24", ErrInvalidRate, "underflows to zero"},
	{"START AT NOW TIME RATE fast", "1:24", ErrInvalidRate, "not a decimal number"},
	{"USE prod.eu", "1:5", ErrInvalidName, "invalid domain name 'prod.eu': a domain name cannot contain '.'"},
	{"USE `prod.eu`", "1:5", ErrInvalidName, "cannot contain '.'"},
	{"DROP DOMAIN ``", "1:13", ErrInvalidName, "cannot be empty"},
	{"USE " + strings.Repeat("a", 129), "1:5", ErrInvalidName, "longer than 128 bytes"},
	{"USE `a/b`", "1:5", ErrInvalidName, "character '/' is not allowed"},
	{"LIST DOMAINS LIKE", "1:18", ErrSyntax, "found end of input"},
	{"LIST DOMAINS LIKE web", "1:19", ErrSyntax, "found 'web'"},
	{"LIST DOMAINS LIKE 'web.%'", "1:19", ErrInvalidPattern, "'.' is never in a domain name"},
	{"LIST DOMAINS LIKE ''", "1:19", ErrInvalidPattern, "the pattern is empty"},
	{`LIST DOMAINS LIKE 'a\'`, "1:19", ErrInvalidPattern, "lone"},
	{"LIST DOMAINS LIKE 'a b'", "1:19", ErrInvalidPattern, "character ' ' is never in a domain name"},
}

// TestNamesOfEveryLength parses a bare name of every length from one
// letter to two past the longest keyword, whatever keyword lengths the
// lookup table holds.
func TestNamesOfEveryLength(t *testing.T) {
	longest := 0
	for _, k := range keywords {
		longest = max(longest, len(k))
	}
	for n := 1; n <= longest+2; n++ {
		name := strings.Repeat("q", n)
		require.Equal(t, &Use{Name: Name{Value: name}}, parseOne(t, "USE "+name), "a name of %d letters", n)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.src, func(t *testing.T) {
			_, err := Parse(tc.src)
			require.Error(t, err)
			var e *Error
			require.True(t, errors.As(err, &e), "%T", err)
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.pos, e.Pos.String(), err.Error())
			require.Contains(t, e.Msg, tc.msg)
			require.Equal(t, tc.pos+": "+e.Msg, err.Error())
			line, col := SourceLine(tc.src, e.Pos)
			require.Equal(t, e.Pos.Column, col)
			require.NotContains(t, line, "\n")
		})
	}
}

func TestPositions(t *testing.T) {
	src := "-- setup\nCREATE PACED DOMAIN prod\n  WITH PERIOD 1s SKEW 100ms;\n\tUSE prod; STOP\n"
	stmts, err := Parse(src)
	require.NoError(t, err)
	require.Len(t, stmts, 3)

	c := stmts[0].(*CreateDomain)
	require.Equal(t, Position{Offset: 9, Line: 2, Column: 1}, c.Pos())
	require.Equal(t, "CREATE PACED DOMAIN prod\n  WITH PERIOD 1s SKEW 100ms", c.Text(src))
	require.Equal(t, Position{Offset: 29, Line: 2, Column: 21}, c.Name.Start)
	require.Equal(t, "prod", c.Name.Text(src))
	require.Equal(t, Position{Offset: 48, Line: 3, Column: 15}, c.Period.Start)
	require.Equal(t, "1s", c.Period.Text(src))
	require.Equal(t, "100ms", c.Skew.Text(src))

	u := stmts[1].(*Use)
	require.Equal(t, Position{Offset: 64, Line: 4, Column: 2}, u.Pos())
	require.Equal(t, "USE prod", u.Text(src))
	require.Equal(t, "STOP", stmts[2].Text(src))
	require.Equal(t, Position{Offset: 74, Line: 4, Column: 12}, stmts[2].Pos())

	// Columns count characters, not bytes.
	_, err = Parse("/* é */ STOP x")
	require.EqualError(t, err, "1:14: expected ';', found 'x'")
}

func TestParseScriptShapes(t *testing.T) {
	for src, n := range map[string]int{
		"":                  0,
		";;;":               0,
		"-- only a comment": 0,
		"STOP":              1,
		"STOP;":             1,
		"STOP;;START":       2,
		"STOP; START;":      2,
		"STOP\n;\nSTART\n":  2,
	} {
		stmts, err := Parse(src)
		require.NoError(t, err, src)
		require.Len(t, stmts, n, src)
	}
	// Statements before an error are returned with it.
	stmts, err := Parse("STOP; START; BOGUS; STOP")
	require.Error(t, err)
	require.Len(t, stmts, 2)
	stmts, err = Parse("STOP; START @")
	require.EqualError(t, err, "1:13: unexpected character '@'")
	require.Len(t, stmts, 1)

	_, err = ParseStatement("STOP; START")
	require.EqualError(t, err, "1:7: expected one statement, found another; run statements one at a time")
	_, err = ParseStatement("  -- nothing\n")
	require.EqualError(t, err, "2:1: expected a statement, found end of input")
}

// FuzzParse checks that Parse never panics, that every error is a *Error
// inside the source, and that every node lies inside the source.
func FuzzParse(f *testing.F) {
	for _, tc := range errorCases {
		f.Add(tc.src)
	}
	f.Add("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms PLACEMENT REQUIRE COLOCATION; USE prod; START AT '2026-01-01T00:00:00Z' TIME RATE 60; ATTACH DOMAIN CLOCK;")
	f.Add("BEGIN; STOP; SHOW TRANSACTIONS; COMMIT;")
	f.Add(`LIST DOMAINS LIKE 'web\_%'; LIST DOMAINS;`)
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			var e *Error
			require.True(t, errors.As(err, &e), "%T %v", err, err)
			require.True(t, e.Pos.Offset >= 0 && e.Pos.Offset <= len(src), "%v", e.Pos)
			require.True(t, e.Pos.Line >= 1 && e.Pos.Column >= 1)
			require.NotNil(t, e.Kind)
		}
		for _, st := range stmts {
			require.True(t, st.Pos().Offset < st.EndPos().Offset && st.EndPos().Offset <= len(src))
			require.NotEmpty(t, st.Text(src))
		}
		_ = Complete(src)
		_, _ = SplitStatements(src)
		_ = Suggest(src)
	})
}

// TestLongStatementIsBounded holds that a statement longer than any in the
// language is refused at its token past maxStatementTokens, and that the
// error costs the same however much text follows: a dotted name repeated
// over a client message's worth of input used to take seconds per error
// (and quadratic time to quote the name).
func TestLongStatementIsBounded(t *testing.T) {
	require.Equal(t, 64, maxStatementTokens)
	// "CREATE DOMAIN " + "a."×n is 2+2n tokens ending in '.'.
	create := func(n int) string { return "CREATE DOMAIN " + strings.Repeat("a.", n) }
	for _, tc := range []struct {
		name string
		src  string
		pos  string
		msg  string
		kind error
	}{
		{"just inside the bound", create(30) + "a", "1:15", "cannot contain '.'", ErrInvalidName},
		{"at the bound", create(31), "1:77", "expected a domain name, found end of input", ErrSyntax},
		{"one token past", create(31) + "a", "1:77", "statement too long at 'a': no statement has more than 64 tokens", ErrSyntax},
		{"far past", create(300_000), "1:77", "statement too long at 'a'", ErrSyntax},
		{"far past, in a later statement", "STOP;\n" + create(300_000), "2:77", "statement too long at 'a'", ErrSyntax},
		{"far past, grammar error first", "USE " + strings.Repeat("a.", 300_000), "1:5", "cannot contain '.'", ErrInvalidName},
		{"far past, bad token first", "STOP " + strings.Repeat("x ", 300_000), "1:6", "expected ';', found 'x'", ErrSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := Parse(tc.src); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second): // a bound on a hang, not a wait for time
				t.Fatalf("parsing %d bytes did not finish", len(tc.src))
			}
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.pos, e.Pos.String(), err.Error())
			require.Contains(t, e.Msg, tc.msg)
			require.Less(t, len(e.Msg), 400)
		})
	}
	// Suggest sees nothing after a statement that long, but recovers at ';'.
	require.Equal(t, Suggestion{}, Suggest(create(300_000)))
	require.Equal(t, []string{"CREATE"}, Suggest(create(300_000)+"; CRE").Keywords)
}
