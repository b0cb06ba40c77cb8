package main

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// laterErrorExecutor blocks until its context ends, as a write waiting on
// the cluster does, then fails with the positioned error a session returns
// for a write that ended after the cancel: not the context's own error.
type laterErrorExecutor struct{ started chan struct{} }

func (b laterErrorExecutor) ExecText(ctx context.Context, _ string) ([]wire.Result, error) {
	close(b.started)
	<-ctx.Done()
	return nil, &follow.StatementError{Pos: grammar.Position{Line: 1, Column: 1}, Msg: "apply timed out", Kind: errors.New("apply timed out")}
}

func TestShellInterruptSaysTheWriteWasCancelled(t *testing.T) {
	exec := laterErrorExecutor{started: make(chan struct{})}
	errOut := newLineSink()
	ed := &scriptedEditor{out: newLineSink()}
	sh := &shell{editor: ed, stderr: errOut,
		run: &runner{exec: exec, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
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
	errOut.waitLine(t, "1:1: error: statement cancelled: apply timed out (a change it had already sent may still be applied; run DESCRIBE DOMAIN; to see whether it did before running it again)")
}

func TestCancelledError(t *testing.T) {
	pos := grammar.Position{Line: 2, Column: 3, Offset: 9}
	kind := errors.New("not the leader")
	tests := []struct {
		name    string
		err     error
		check   string
		wantMsg string
		wantPos grammar.Position
		wantIs  error
	}{
		{"abandoned", context.Canceled, "run LIST DOMAINS; to see whether it did",
			"statement abandoned at Ctrl-C (context canceled): nspl stopped waiting for the node, which is told to cancel it; a change it had already sent may still be applied; run LIST DOMAINS; to see whether it did before running it again", grammar.Position{}, context.Canceled},
		{"abandoned read", context.Canceled, "",
			"statement abandoned at Ctrl-C (context canceled): nspl stopped waiting for the node, which is told to cancel it; it changes nothing, so it can simply run again", grammar.Position{}, context.Canceled},
		{"unpositioned", errors.New("boom"), "run X;", "statement cancelled: boom (a change it had already sent may still be applied; run X; before running it again)", grammar.Position{}, nil},
		{"positioned", &follow.StatementError{Pos: pos, Msg: "not the leader", Kind: kind}, "run DESCRIBE DOMAIN;",
			"statement cancelled: not the leader (a change it had already sent may still be applied; run DESCRIBE DOMAIN; before running it again)", pos, kind},
		{"syntax", &follow.StatementError{Pos: pos, Msg: "expected ';'", Kind: &grammar.Error{Pos: pos, Msg: "expected ';'", Kind: grammar.ErrSyntax}}, "x", "expected ';'", pos, grammar.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cancelledError(tt.err, tt.check)
			if tt.wantIs != nil {
				require.ErrorIs(t, got, tt.wantIs)
			}
			var ge *follow.StatementError
			if !errors.As(got, &ge) {
				require.Equal(t, tt.wantMsg, got.Error())
				return
			}
			require.Equal(t, tt.wantMsg, ge.Msg)
			require.Equal(t, tt.wantPos, ge.Pos)
			require.Equal(t, ge, cancelledError(ge, tt.check), "cancelled twice")
		})
	}
}

// slowExecutor succeeds after moving its fake clock on by took, as if the
// statement took that long.
type slowExecutor struct {
	clock *timesource.Fake
	took  time.Duration
}

func (s slowExecutor) ExecText(context.Context, string) ([]wire.Result, error) {
	s.clock.Advance(s.took)
	return []wire.Result{{Message: "stopped domain 'prod'"}}, nil
}

func TestTimingMeasuresOnTheClock(t *testing.T) {
	clock := timesource.NewFake(0)
	out := newLineSink()
	r := &runner{exec: slowExecutor{clock: clock, took: 1500 * time.Millisecond}, stdout: out, stderr: out, format: formatTable,
		outMu: new(sync.Mutex), clock: clock}
	_, err := r.runText(context.Background(), "", "STOP;", false)
	require.NoError(t, err)
	r.timing = true
	_, err = r.runText(context.Background(), "", "STOP;", false)
	require.NoError(t, err)
	require.Equal(t, []string{"stopped domain 'prod'", "stopped domain 'prod'", "time: 1.5s"}, out.lines())
}
