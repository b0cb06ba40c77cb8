package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/grammar"
)

// openEmbedded is an embedded in-memory engine's session for the length of
// the test.
func openEmbedded(t *testing.T) *nspl.Session {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := nspl.Open(context.Background(), nspl.Options{Logger: logger})
	require.NoError(t, err)
	sess, err := eng.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() {
		sess.Close()
		eng.Close()
	})
	return sess
}

// TestScriptParsesEachStatementOnce holds "parse once" for the script
// runner on an embedded session, which is one side: the script is split
// once and each statement parsed once, by the session that runs it, LIST
// DOMAINS (whose rows stream) and the statement that fails included.
func TestScriptParsesEachStatementOnce(t *testing.T) {
	sess := openEmbedded(t)
	var out, errOut strings.Builder
	r := &runner{exec: sess, stdout: &out, stderr: &errOut, format: formatTable, outMu: new(sync.Mutex)}
	script := "CREATE DOMAIN a; -- one\nUSE a;\nLIST\n  DOMAINS LIKE 'a%';\nDESCRIBE DOMAIN;\n  START AT NOW TIME RATE 0;\nSTOP;\n"
	before := grammar.Parses()
	res, err := r.runText(context.Background(), "s.nspl", script, false)
	require.NoError(t, err)
	require.Equal(t, 1, res.failed)
	require.Equal(t, 1, res.skipped)
	require.Equal(t, uint64(5), grammar.Parses()-before, "five statements ran, each parsed once")
	require.Contains(t, out.String(), "1 domain")
	require.Contains(t, errOut.String(), "s.nspl:6:26: error: ", "the error points into the script")
}

// TestShellParsesEachStatementOnce holds it for the shell: what is typed is
// split once for the history and the runner, and each statement is parsed
// once, however many lines it took.
func TestShellParsesEachStatementOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	sess := openEmbedded(t)
	ed := &scriptedEditor{lines: make(chan keyedLine), out: newLineSink()}
	errOut := newLineSink()
	sh := &shell{sess: sess, editor: ed, stderr: errOut,
		run: &runner{exec: sess, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
	done := make(chan error, 1)
	before := grammar.Parses()
	go func() { done <- sh.loop(context.Background()) }()
	send := func(text string) { ed.lines <- keyedLine{text: text} }
	send("CREATE DOMAIN a; USE")
	send("  a; LIST")
	send("DOMAINS; -- all of them")
	send("USE nope;")
	send("exit")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not leave on exit")
	}
	errOut.waitLine(t, "1:1: error: domain 'nope' does not exist")
	require.Equal(t, uint64(4), grammar.Parses()-before, "four statements ran, each parsed once")
	ed.mu.Lock()
	defer ed.mu.Unlock()
	require.Equal(t, []string{"CREATE DOMAIN a;", "USE a;", "LIST DOMAINS;", "USE nope;"}, ed.history)
}

// TestRemoteScriptParsesEachStatementOnce runs a script through the runner
// on a remote client against a server in this process: the client side
// parses nothing and the server parses each statement once, so the
// process's count is one per statement, and the server's error still points
// into the script.
func TestRemoteScriptParsesEachStatementOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	url := serveInsecureNode(t)
	c, err := client.Dial(context.Background(), client.Config{URLs: []string{url}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })

	var out, errOut strings.Builder
	r := &runner{exec: c, stdout: &out, stderr: &errOut, format: formatTable, outMu: new(sync.Mutex)}
	script := "CREATE DOMAIN a; -- one\nUSE a;\nLIST\n  DOMAINS LIKE 'a%';\nDESCRIBE DOMAIN;\n  START AT NOW TIME RATE 0;\nSTOP;\n"
	before := grammar.Parses()
	res, err := r.runText(context.Background(), "s.nspl", script, false)
	require.NoError(t, err)
	require.Equal(t, 1, res.failed)
	require.Equal(t, uint64(5), grammar.Parses()-before, "five statements ran, each parsed once, by the server")
	require.Contains(t, out.String(), "1 domain")
	require.Contains(t, errOut.String(), "s.nspl:6:26: error: ", "the server's error points into the script")
}
