package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// cmdShell is the testscript command
//
//	shell FILE [nspl flags...]
//
// It runs the interactive shell in-process, typing the lines of FILE one by
// one as a terminal would, and writes a transcript to stdout as a terminal
// shows it: each prompt followed by the line typed at it, every reply and
// every diagnostic. Diagnostics also go to stderr, alone. A line ^C is Ctrl-C while editing. The end of FILE is Ctrl-D.
// The shell runs in the test's directory, not $WORK, so a line names files
// as $WORK/NAME: $VARS are expanded as they are typed (compare with cmpenv).
// \timing measures on a fake clock that never moves, so it prints 0s.
func cmdShell(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: shell FILE [flags...]")
	}
	input := ts.ReadFile(args[0])
	var outMu sync.Mutex
	out := &lockedWriter{mu: &outMu, w: ts.Stdout()}
	errOut := &lockedWriter{mu: &outMu, w: io.MultiWriter(ts.Stdout(), ts.Stderr())}
	m := &Main{
		Stdin:           strings.NewReader(""),
		Stdout:          out,
		Stderr:          errOut,
		StdinIsTerminal: func() bool { return true },
		TimeSource:      timesource.NewFake(0),
		LookupEnv: func(k string) (string, bool) {
			v := ts.Getenv(k)
			return v, v != ""
		},
		openEditor: func(completer) (noticeEditor, error) {
			return &typedEditor{lines: strings.Split(strings.TrimSuffix(input, "\n"), "\n"), out: out, expand: ts.Getenv}, nil
		},
	}
	err := m.Run(context.Background(), args[1:])
	if err != nil && !reported(err) {
		_, _ = io.WriteString(errOut, "nspl: "+err.Error()+"\n")
	}
	switch {
	case neg && err == nil:
		ts.Fatalf("shell succeeded unexpectedly")
	case !neg && err != nil:
		ts.Fatalf("shell: %v", err)
	}
}

// typedEditor is a lineEditor that types prepared lines and echoes each
// after its prompt, as a terminal shows them.
type typedEditor struct {
	lines  []string
	out    io.Writer
	expand func(string) string
}

func (e *typedEditor) ReadLine(prompt string) (string, error) {
	if len(e.lines) == 0 {
		_, _ = io.WriteString(e.out, prompt+"^D\n")
		return "", io.EOF
	}
	l := os.Expand(e.lines[0], e.expand)
	e.lines = e.lines[1:]
	_, _ = io.WriteString(e.out, prompt+l+"\n")
	if l == "^C" {
		return "", errLineInterrupted
	}
	return l, nil
}

func (e *typedEditor) SaveHistory(string) error { return nil }
func (e *typedEditor) Output() io.Writer        { return e.out }
func (e *typedEditor) PrintAbove(line string) error {
	_, err := io.WriteString(e.out, line+"\n")
	return err
}
func (e *typedEditor) PrintNoticeAbove(line string) { _ = e.PrintAbove(line) }
func (e *typedEditor) Close() error                 { return nil }

// lockedWriter serialises writes to w: the shell's event printer and its
// loop may write at once.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
