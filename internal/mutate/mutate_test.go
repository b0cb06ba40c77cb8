package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTests(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell string
		want []string
		err  string
	}{
		{name: "one", cell: "clock · TestA", want: []string{"clock · TestA"}},
		{name: "root and subtests", cell: ". · TestX/a, /b (why); cmd/nspl · TestScripts/clock",
			want: []string{". · TestX/a", ". · TestX/b", "cmd/nspl · TestScripts/clock"}},
		{name: "a subtest with a comma", cell: "clock · TestWindowTable/skew_edges_inclusive,_gaps_reject",
			want: []string{"clock · TestWindowTable/skew_edges_inclusive,_gaps_reject"}},
		{name: "asides hide semicolons and packages", cell: "node · TestT (STOP; START; runtime · TestNot); session · TestS",
			want: []string{"node · TestT", "session · TestS"}},
		{name: "prose after the tests", cell: "session · TestFrameLimit (frames); the end frame is shorter",
			want: []string{"session · TestFrameLimit"}},
		{name: "prose before the package", cell: "out of reach here; the clock is held by clock · TestA, TestB",
			want: []string{"clock · TestA", "clock · TestB"}},
		{name: "two packages in one part", cell: "planner · TestA, grammar · TestB", err: "second package"},
		{name: "an unreadable name", cell: "runtime · TestA. More prose", err: "cannot read"},
		{name: "an open aside", cell: "runtime · TestA (never closed", err: "not closed"},
		{name: "a stray close", cell: "runtime · TestA) x", err: "closes no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := parseTests(tc.cell)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, r := range refs {
				got = append(got, r.String())
			}
			require.Equal(t, tc.want, got)
		})
	}
}

const sampleTable = `# Coverage

| # | sentence | test (package · TestName) or "out of scope: reason" |
|---|---|---|
| T1 | "A." | out of scope: nothing |
| T2 | "B." | clock · TestA, TestB/x |
| T3 | "C." | runtime · TestC |
`

func TestParseTable(t *testing.T) {
	tab, err := parseTable(sampleTable)
	require.NoError(t, err)
	require.Len(t, tab.rows, 3)
	require.True(t, tab.byID["T1"].scope)
	require.Equal(t, []testRef{{"clock", "TestA"}, {"clock", "TestB/x"}}, tab.byID["T2"].tests)
	require.Equal(t, 6, tab.byID["T2"].line)

	for _, tc := range []struct{ name, text, err string }{
		{"gap", strings.Replace(sampleTable, "runtime · TestC", "runtime · TestC; gap: nothing holds it", 1), "marked gap"},
		{"no test", strings.Replace(sampleTable, "runtime · TestC", "held somewhere", 1), "names no test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := parseTable(tc.text)
			require.NoError(t, err)
			require.ErrorContains(t, tab.rowErrors(func(*row) bool { return true }), tc.err)
		})
	}
	_, err = parseTable(sampleTable + "| T3 | \"D.\" | runtime · TestD |\n")
	require.ErrorContains(t, err, "appears twice")
	_, err = parseTable("no table here\n")
	require.ErrorContains(t, err, "no rows")
}

func TestWithColumn(t *testing.T) {
	tab, err := parseTable(sampleTable)
	require.NoError(t, err)
	muts := map[string][]*mutation{"T2": {{file: "clock/tick.go", what: "a | b"}, {file: "clock/x.go", what: "c"}}}
	once := tab.withColumn(muts)
	require.Contains(t, once, "| # | sentence | test (package · TestName) or \"out of scope: reason\" | mutation that fails it |")
	require.Contains(t, once, "|---|---|---|---|")
	require.Contains(t, once, "| T1 | \"A.\" | out of scope: nothing | — |")
	require.Contains(t, once, "| T2 | \"B.\" | clock · TestA, TestB/x | `clock/tick.go`: a \\| b; `clock/x.go`: c |")
	require.Contains(t, once, "| T3 | \"C.\" | runtime · TestC | none yet |")

	again, err := parseTable(once)
	require.NoError(t, err)
	require.Equal(t, once, again.withColumn(muts), "writing the column twice gives the same file")
	require.Equal(t, tab.byID["T2"].tests, again.byID["T2"].tests, "the column does not change what a row names")
}

func TestParseList(t *testing.T) {
	muts, err := parseList("l.txt", `# a comment

row: T2 C5
file: clock/tick.go
from: "\tx := 1\n"
to: ""
what: deletes x

row: T3
file: runtime/a.go
from: a < b
to: a <= b
what: off by one
`)
	require.NoError(t, err)
	require.Len(t, muts, 2)
	require.Equal(t, []string{"T2", "C5"}, muts[0].rows)
	require.Equal(t, "\tx := 1\n", muts[0].from)
	require.Equal(t, "", muts[0].to)
	require.Equal(t, "l.txt:3", muts[0].source)
	require.Equal(t, "a <= b", muts[1].to)

	for _, tc := range []struct{ name, text, err string }{
		{"missing key", "row: T1\nfile: a.go\nfrom: x\nwhat: w\n", `no "to" line`},
		{"same text", "row: T1\nfile: a.go\nfrom: x\nto: x\nwhat: w\n", "the same text"},
		{"empty from", "row: T1\nfile: a.go\nfrom: \"\"\nto: x\nwhat: w\n", "from is empty"},
		{"bad row", "row: X1\n", "not a row id"},
		{"test file", "file: a_test.go\n", "not a test"},
		{"absolute", "file: /etc/a.go\n", "relative"},
		{"escape", "file: ../a.go\n", "relative"},
		{"unknown key", "rows: T1\n", "unknown key"},
		{"twice", "row: T1\nrow: T2\n", "second"},
		{"no colon", "row T1\n", "key: value"},
		{"bad quote", "from: \"abc\n", "Go string literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseList("l.txt", tc.text)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestApply(t *testing.T) {
	m := &mutation{source: "l.txt:1", file: "a.go", from: "a < b", to: "a <= b"}
	got, err := m.apply("if a < b {}")
	require.NoError(t, err)
	require.Equal(t, "if a <= b {}", got)
	_, err = m.apply("if a > b {}")
	require.ErrorContains(t, err, "is not in")
	_, err = m.apply("a < b; a < b")
	require.ErrorContains(t, err, "occurs 2 times")
}

func TestSelectRows(t *testing.T) {
	tab, err := parseTable(sampleTable)
	require.NoError(t, err)
	p := &plan{tab: tab}
	rows, err := p.selectRows("T1-T3")
	require.NoError(t, err)
	require.Len(t, rows, 2, "out-of-scope rows are never selected")
	rows, err = p.selectRows("T3")
	require.NoError(t, err)
	require.Equal(t, "T3", rows[0].id)
	_, err = p.selectRows("T1")
	require.ErrorContains(t, err, "selects no behavioural row")
	_, err = p.selectRows("T1-C3")
	require.ErrorContains(t, err, "not a row id or a range")
}

// FuzzParse holds the readers to never panicking, and the column writer
// to giving the same file when run on its own output.
func FuzzParse(f *testing.F) {
	f.Add(sampleTable)
	f.Add("row: T1\nfile: a.go\nfrom: \"x\"\nto: y\nwhat: w\n")
	f.Add("| T1 | x | a · TestA (b; c) `|` |\n")
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = parseList("f.txt", text)
		_, _ = parseTests(text)
		tab, err := parseTable(text)
		if err != nil {
			return
		}
		once := tab.withColumn(nil)
		again, err := parseTable(once)
		require.NoError(t, err)
		require.Equal(t, once, again.withColumn(nil))
	})
}
