package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/wire"
)

// writeCounter records what was written and in how many writes.
type writeCounter struct {
	strings.Builder
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Builder.Write(p)
}

func (w *writeCounter) WriteString(s string) (int, error) {
	w.writes++
	return w.Builder.WriteString(s)
}

// textOnly hides a session's ExecTextRows: the runner prints it as before
// streaming, from the whole result.
type textOnly struct{ statementExecutor }

// TestStreamedListPrintsAsRowsArrive runs LIST DOMAINS on 1,100 domains
// (five chunks, two table pages) in every format: the csv, plain and json
// output is written chunk by chunk, and is what the whole result prints
// (json: the same object with the rows before the message); table output is
// drawn a page of tablePageRows rows at a time, each page a table with its
// header; and a filtered list streams only its matches.
func TestStreamedListPrintsAsRowsArrive(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	require.Equal(t, 1024, tablePageRows)
	const domains = 1100
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := nspl.Open(context.Background(), nspl.Options{Logger: logger})
	require.NoError(t, err)
	sess, err := eng.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() {
		sess.Close()
		eng.Close()
	})
	var b strings.Builder
	for i := range domains {
		fmt.Fprintf(&b, "CREATE DOMAIN d%04d;", i)
	}
	_, err = sess.ExecText(context.Background(), b.String())
	require.NoError(t, err)

	run := func(exec statementExecutor, format outputFormat, text string) *writeCounter {
		t.Helper()
		out := &writeCounter{}
		r := &runner{exec: exec, stdout: out, stderr: io.Discard, format: format, outMu: new(sync.Mutex)}
		res, err := r.runText(context.Background(), "", text, false)
		require.NoError(t, err)
		require.Zero(t, res.failed)
		return out
	}
	chunks := (domains + wire.RowsChunkLimit - 1) / wire.RowsChunkLimit
	for _, format := range []outputFormat{formatCSV, formatPlain} {
		t.Run(string(format), func(t *testing.T) {
			streamed := run(sess, format, "LIST DOMAINS;")
			whole := run(textOnly{sess}, format, "LIST DOMAINS;")
			require.Equal(t, whole.String(), streamed.String())
			require.Equal(t, 1, whole.writes)
			require.GreaterOrEqual(t, streamed.writes, chunks, "a write per chunk as it arrives")
		})
	}
	t.Run("json", func(t *testing.T) {
		streamed := run(sess, formatJSON, "LIST DOMAINS;")
		whole := run(textOnly{sess}, formatJSON, "LIST DOMAINS;")
		require.GreaterOrEqual(t, streamed.writes, chunks)
		require.Equal(t, 1, strings.Count(streamed.String(), "\n"), "one object on one line")
		require.JSONEq(t, whole.String(), streamed.String())
		var obj struct {
			Rows []map[string]any `json:"rows"`
		}
		require.NoError(t, json.Unmarshal([]byte(streamed.String()), &obj))
		require.Len(t, obj.Rows, domains)
	})
	t.Run("table", func(t *testing.T) {
		streamed := run(sess, formatTable, "LIST DOMAINS;")
		require.Equal(t, 2, strings.Count(streamed.String(), "| name "), "a header per page")
		require.Equal(t, 3, streamed.writes, "two pages, then the message")
		require.True(t, strings.HasSuffix(streamed.String(), "\n1100 domains\n"), streamed.String()[max(0, streamed.Len()-80):])
		for i := range domains {
			require.Contains(t, streamed.String(), fmt.Sprintf("| d%04d ", i))
		}
		small := run(sess, formatTable, "LIST DOMAINS LIKE 'd000%';")
		require.Equal(t, run(textOnly{sess}, formatTable, "LIST DOMAINS LIKE 'd000%';").String(), small.String(), "a list under a page prints as before")
	})
}
