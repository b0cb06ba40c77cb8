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
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// keyedLine is one line the scripted editor returns: text, or an error such
// as errLineInterrupted or io.EOF.
type keyedLine struct {
	text string
	err  error
}

// scriptedEditor is a lineEditor fed by the test: ReadLine records the
// prompt and returns the next line the test sends.
type scriptedEditor struct {
	lines   chan keyedLine
	out     *lineSink
	mu      sync.Mutex
	prompts []string
	history []string
}

func (e *scriptedEditor) ReadLine(prompt string) (string, error) {
	e.mu.Lock()
	e.prompts = append(e.prompts, prompt)
	e.mu.Unlock()
	l, ok := <-e.lines
	if !ok {
		return "", io.EOF
	}
	return l.text, l.err
}

func (e *scriptedEditor) SaveHistory(entry string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.history = append(e.history, entry)
	return nil
}

func (e *scriptedEditor) Output() io.Writer { return e.out }

func (e *scriptedEditor) PrintAbove(line string) error {
	_, err := io.WriteString(e.out, line+"\n")
	return err
}

func (e *scriptedEditor) Close() error { return nil }

func TestShellLoop(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := nspl.Open(context.Background(), nspl.Options{Logger: logger})
	require.NoError(t, err)
	sess, err := eng.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() {
		sess.Close()
		eng.Close()
	})
	ed := &scriptedEditor{lines: make(chan keyedLine), out: newLineSink()}
	errOut := newLineSink()
	sh := &shell{sess: sess, editor: ed, stderr: errOut,
		run: &runner{exec: sess, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
	done := make(chan error, 1)
	go func() { done <- sh.loop(context.Background()) }()
	send := func(text string) { ed.lines <- keyedLine{text: text} }

	send("CREATE PACED DOMAIN prod -- the production clock")
	send("  WITH PERIOD 100ms SKEW 10ms;")
	ed.out.waitLine(t, "created domain 'prod'")
	send(`\?`)
	ed.out.waitLine(t, "Statements (end each with ;):")
	send("USE prod; START AT '2030-01-01T00:00:00Z' TIME RATE 1000; LIST")
	send("DOMAINS;")
	ed.out.waitLine(t, "1 domain")
	send("ATTACH DOMAIN CLOCK;")
	ed.out.waitLine(t, "[clock prod] tick ")
	send("DROP DOMAIN")
	ed.lines <- keyedLine{text: "prod", err: errLineInterrupted}
	send("USE nope;")
	errOut.waitLine(t, "1:1: error: domain 'nope' does not exist")
	send("BEGIN;")
	send("exit")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not leave on exit")
	}

	out := strings.Join(ed.out.lines(), "\n")
	reply := strings.Index(out, "attached to the clock of domain 'prod'")
	frame := strings.Index(out, "[clock prod]")
	require.GreaterOrEqual(t, reply, 0)
	require.Greater(t, frame, reply, "a frame was printed before the ATTACH reply")
	require.NotContains(t, out, "dropped")
	require.Equal(t, []string{
		"nspl> ", "...> ", "nspl> ", "nspl> ", "...> ", "nspl[prod]> ", "nspl[prod]> ",
		"...> ", "nspl[prod]> ", "nspl[prod]> ", "nspl[prod]*> ",
	}, ed.prompts)
	require.Equal(t, []string{
		"CREATE PACED DOMAIN prod WITH PERIOD 100ms SKEW 10ms;",
		"USE prod;",
		"START AT '2030-01-01T00:00:00Z' TIME RATE 1000;",
		"LIST DOMAINS;",
		"ATTACH DOMAIN CLOCK;",
		"USE nope;",
		"BEGIN;",
	}, ed.history)
}

// blockingExecutor runs no statement: it blocks until its context ends, as
// a long statement does, so the test can cancel it.
type blockingExecutor struct{ started chan struct{} }

func (b blockingExecutor) ExecText(ctx context.Context, _ string) ([]wire.Result, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestShellInterruptCancelsTheRunningStatement(t *testing.T) {
	exec := blockingExecutor{started: make(chan struct{})}
	errOut := newLineSink()
	ed := &scriptedEditor{out: newLineSink()}
	sh := &shell{editor: ed, stderr: errOut,
		run: &runner{exec: exec, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
	sh.interrupt() // idle: nothing to cancel, nothing happens
	done := make(chan error, 1)
	go func() { done <- sh.execute(context.Background(), grammar.Split("STOP; STOP;")) }()
	<-exec.started
	sh.interrupt()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(expectTimeout):
		t.Fatal("Ctrl-C did not cancel the statement")
	}
	errOut.waitLine(t, "1:1: error: statement abandoned at Ctrl-C (context canceled): ")
	require.Len(t, errOut.lines(), 3, "the second STOP did not run")
}
