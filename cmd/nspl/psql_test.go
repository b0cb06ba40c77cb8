package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

func TestWriteExpanded(t *testing.T) {
	cols := []wire.Column{{Name: "name"}, {Name: "generation"}}
	tests := []struct {
		name  string
		set   *wire.ResultSet
		first int
		want  string
	}{
		{
			name:  "a record per row, the + under the bar",
			set:   &wire.ResultSet{Columns: cols, Rows: [][]wire.Value{{wire.Text("prod"), wire.Uint(3)}, {wire.Text("a"), wire.Null()}}},
			first: 1,
			want: "-[ RECORD 1 ]+-----\n" +
				"name       | prod\n" +
				"generation | 3\n" +
				"-[ RECORD 2 ]+-----\n" +
				"name       | a\n" +
				"generation | NULL\n",
		},
		{
			name:  "numbered from a later page, names wider than the label",
			set:   &wire.ResultSet{Columns: []wire.Column{{Name: "mapping_wall_started_at"}}, Rows: [][]wire.Value{{wire.Text("x")}}},
			first: 1025,
			want:  "-[ RECORD 1025 ]--------+--\nmapping_wall_started_at | x\n",
		},
		{
			name:  "control characters are escaped",
			set:   &wire.ResultSet{Columns: []wire.Column{{Name: "n\x1b"}}, Rows: [][]wire.Value{{wire.Text("a\x1b[2J")}}},
			first: 1,
			want:  "-[ RECORD 1 ]+---------\nn\\x1b | a\\x1b[2J\n",
		},
		{
			name:  "no rows, nothing",
			set:   &wire.ResultSet{Columns: cols},
			first: 1,
			want:  "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeExpanded(&b, tc.set, tc.first))
			require.Equal(t, tc.want, b.String())
		})
	}
}

func TestSubstituteVariables(t *testing.T) {
	vars := map[string]string{"d": "prod", "at": "2030-01-01T00:00:00Z", "q": "it's"}
	tests := []struct {
		name, text, want string
		undefined        string
		offset           int
	}{
		{name: "a name", text: "USE :d;", want: "USE prod;"},
		{name: "a quoted literal", text: "START AT :'at';", want: "START AT '2030-01-01T00:00:00Z';"},
		{name: "a quote doubled", text: "LIST DOMAINS LIKE :'q';", want: "LIST DOMAINS LIKE 'it''s';"},
		{name: "not in a string", text: "LIST DOMAINS LIKE ':d';", want: "LIST DOMAINS LIKE ':d';"},
		{name: "not in a quoted name", text: "USE `:d`;", want: "USE `:d`;"},
		{name: "not in comments", text: "USE :d; -- :x\n/* :y */ // :z", want: "USE prod; -- :x\n/* :y */ // :z"},
		{name: "a double colon and a lone one", text: "a ::d : :", want: "a ::d : :"},
		{name: "two, back to back", text: ":d:d", want: "prodprod"},
		{name: "undefined", text: "USE :nope;", undefined: "nope", offset: 4},
		{name: "undefined quoted", text: "START AT :'when';", undefined: "when", offset: 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := substituteVariables(tc.text, vars)
			if tc.undefined != "" {
				require.ErrorIs(t, err, ErrUndefinedVariable)
				var uv *undefinedVariableError
				require.ErrorAs(t, err, &uv)
				require.Equal(t, tc.undefined, uv.Name)
				require.Equal(t, tc.offset, uv.Offset)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestOriginalOffset(t *testing.T) {
	text := "CREATE DOMAIN :d PLACEMENT X;"
	got, subs, err := substituteVariables(text, map[string]string{"d": "a_long_name"})
	require.NoError(t, err)
	require.Equal(t, strings.Index(text, "X"), originalOffset(subs, strings.Index(got, "X")))
	require.Equal(t, strings.Index(text, ":d"), originalOffset(subs, strings.Index(got, "long")))
	require.Equal(t, 3, originalOffset(subs, 3))
}

func TestSplitScriptFindsBackslashLines(t *testing.T) {
	text := "CREATE DOMAIN a;\n  \\x\nLIST\n\\x\n  DOMAINS;\n.tables\n"
	sc, metas := splitScript(text)
	require.Len(t, sc.Statements, 2, "a backslash inside a statement is part of it")
	require.Len(t, metas, 2)
	require.Equal(t, `\x`, metas[0].cmd.name)
	require.Equal(t, 2, metas[0].pos.Line)
	require.Equal(t, 3, metas[0].pos.Column)
	require.Equal(t, ".tables", metas[1].cmd.name)
	require.Equal(t, 6, metas[1].pos.Line)
	require.Equal(t, 3, sc.Statements[1].Start.Line, "statements keep their positions")
}

// countingExec answers every statement with a message counting the runs.
type countingExec struct {
	mu   sync.Mutex
	runs int
}

func (c *countingExec) ExecText(ctx context.Context, text string) ([]wire.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs++
	return []wire.Result{{Message: "ran " + text}}, nil
}

func (c *countingExec) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// TestWatchRunsUntilInterrupted drives the shell's \watch without a count
// on a fake clock: it runs the last statement at once, again each time the
// interval passes on the clock, and ends without an error when cancelled.
func TestWatchRunsUntilInterrupted(t *testing.T) {
	clock := timesource.NewFake(0)
	exec := &countingExec{}
	var out lockedBuffer
	r := &runner{exec: exec, stdout: &out, stderr: &out, format: formatTable, outMu: new(sync.Mutex), clock: clock, last: "LIST DOMAINS;"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan metaResult, 1)
	go func() {
		res, err := r.meta(ctx, "", metaCommand{name: `\watch`, arg: "3"}, false)
		require.NoError(t, err)
		done <- res
	}()
	for run := 1; run <= 3; run++ {
		require.NoError(t, clock.BlockUntil(ctx, 1), "\\watch waits on the clock")
		require.Equal(t, run, exec.count())
		clock.Advance(3 * time.Second)
	}
	require.NoError(t, clock.BlockUntil(ctx, 1))
	require.Equal(t, 4, exec.count())
	cancel()
	res := <-done
	require.Empty(t, res.msg)
	require.False(t, res.failed)
	require.Contains(t, out.String(), "watch every 3s: run 4\n")
}

// lockedBuffer is a strings.Builder safe for the writer and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
