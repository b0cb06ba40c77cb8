package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/wire"
)

// mute is a session server that answers USE and nothing else, as a node
// stopped in the middle of a statement does: it reports each statement it
// holds and each cancel it receives.
type mute struct {
	held    chan string // the statements it will never answer
	cancels chan uint64 // the ids of the cancels received
}

func (s *mute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	write := func(m wire.ServerMessage) {
		_ = enc.Encode(m)
		_ = rc.Flush()
	}
	write(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "n1"})
	lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
	for {
		l, err := lr.Next()
		if err != nil {
			return
		}
		var m wire.ClientMessage
		if json.Unmarshal(l, &m) != nil {
			continue
		}
		switch {
		case m.Type == wire.TypeCancel:
			s.cancels <- m.ID
		case m.Type == wire.TypeExec && m.Text == "USE prod;":
			write(wire.ServerMessage{Type: wire.TypeReply, ID: m.ID, Result: &wire.EncodedResult{Statement: m.Text, Message: "using domain 'prod'", Domain: "prod"}, State: &wire.SessionState{Active: "prod"}})
		case m.Type == wire.TypeExec:
			s.held <- m.Text
		}
	}
}

// TestShellAbandonsAStatementTheNodeNeverAnswers presses Ctrl-C on a
// statement its node never answers. The client's time source is a fake
// that never moves, so a wait for the node's answer to the cancel (the
// cancel grace) would never end: the diagnostic arrives only because the
// shell abandons the statement at once. It says the change may still
// commit and which statement shows whether it did; the cancel reaches the
// node in the background, and the shell goes on to the next line.
func TestShellAbandonsAStatementTheNodeNeverAnswers(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv := &mute{held: make(chan string, 4), cancels: make(chan uint64, 4)}
	url := testserve.H2C(t, srv)
	m := &Main{Stderr: newLineSink()}
	cfg, err := m.clientConfig(remoteOptions{connect: url}, false)
	require.NoError(t, err)
	cfg.TimeSource = timesource.NewFake(0)
	cfg.Notify = nil
	c, err := client.Dial(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })

	ed := &scriptedEditor{lines: make(chan keyedLine), out: newLineSink()}
	errOut := newLineSink()
	sh := &shell{sess: c, editor: ed, stderr: errOut,
		run: &runner{exec: c, stdout: ed.out, stderr: errOut, format: formatTable, outMu: new(sync.Mutex)}}
	done := make(chan error, 1)
	go func() { done <- sh.loop(context.Background()) }()
	send := func(text string) { ed.lines <- keyedLine{text: text} }

	send("USE prod;")
	ed.out.waitLine(t, "using domain 'prod'")
	send("STOP;")
	select {
	case got := <-srv.held:
		require.Equal(t, "STOP;", got)
	case <-time.After(expectTimeout):
		t.Fatal("the statement did not reach the node")
	}
	sh.interrupt()
	errOut.waitLine(t, "1:1: error: statement abandoned at Ctrl-C (context canceled): nspl stopped waiting for the node, which is told to cancel it; a change it had already sent may still be applied; run DESCRIBE DOMAIN prod; to see whether it did before running it again")
	select {
	case <-srv.cancels:
	case <-time.After(expectTimeout):
		t.Fatal("the node was not told to cancel the statement")
	}
	// The prompt is back: the next line is read and runs.
	send("LIST DOMAINS;")
	select {
	case got := <-srv.held:
		require.Equal(t, "LIST DOMAINS;", got)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not run the next statement")
	}
	sh.interrupt()
	errOut.waitLine(t, "1:1: error: statement abandoned at Ctrl-C (context canceled): nspl stopped waiting for the node, which is told to cancel it; it changes nothing, so it can simply run again")
	send("exit")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not exit")
	}
}
