package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// openResuming opens a raw session with hc, naming resume (when set) in
// wire.ResumeHeader, and returns it with its welcome.
func openResuming(t *testing.T, hc *http.Client, url, resume string) (*rawSession, wire.ServerMessage) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url+wire.SessionPath, pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-ndjson")
	if resume != "" {
		req.Header.Set(wire.ResumeHeader, resume)
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	t.Cleanup(func() {
		_ = pw.Close()
		_ = resp.Body.Close()
	})
	s := &rawSession{t: t, pw: pw, lr: wire.NewLineReader(resp.Body, wire.ServerMessageLimit), body: resp.Body}
	welcome := s.read()
	require.Equal(t, wire.TypeWelcome, welcome.Type)
	require.NotEmpty(t, welcome.Resume)
	return s, welcome
}

// cut ends the session as a lost connection does: the request stream is
// reset, not ended.
func (s *rawSession) cut() {
	_ = s.pw.CloseWithError(errors.New("connection cut"))
	if s.body != nil {
		_ = s.body.Close()
	}
}

// execOK runs text on s as request id and requires a reply.
func (s *rawSession) execOK(id uint64, text string) wire.ServerMessage {
	s.t.Helper()
	s.send(wire.ClientMessage{Type: wire.TypeExec, ID: id, Text: text})
	m := s.read()
	require.Equal(s.t, wire.TypeReply, m.Type, "%s: %+v", text, m.Error)
	return m
}

// openTx opens a session of name on e, makes domain d and queues a START
// in a transaction on it, and returns the session and its resume token.
func openTx(t *testing.T, hc *http.Client, url, domain string) (*rawSession, string) {
	t.Helper()
	s, welcome := openResuming(t, hc, url, "")
	s.execOK(1, "CREATE IF NOT EXISTS DOMAIN "+domain+";")
	s.execOK(2, "USE "+domain+";")
	s.execOK(3, "BEGIN;")
	m := s.execOK(4, "START AT '2026-01-01T00:00:00Z';")
	require.Equal(t, &wire.SessionState{Active: domain, InTx: true, TxDomain: domain, TxPending: 1}, m.State)
	return s, welcome.Resume
}

// TestLostSessionsTransactionIsTakenUp: a session whose connection is lost
// with a transaction open holds it for its client; the client's next
// session, naming the lost one's resume token, takes it up with its
// queued step and commits it. A session the client closed reverts its
// transaction; another identity's session, the same token in hand, gets
// nothing; a held transaction lapses after the resume timeout; and a client
// that reconnects before the server noticed the loss takes the session
// over.
func TestLostSessionsTransactionIsTakenUp(t *testing.T) {
	fake := timesource.NewFake(0)
	e := newTLSEnv(t, Config{TimeSource: fake, Limits: Limits{ResumeTimeout: time.Minute}})
	alice, bob := e.clientHTTP(t, "alice"), e.clientHTTP(t, "bob")

	t.Run("lost, then taken up and committed", func(t *testing.T) {
		s, token := openTx(t, alice, e.url, "lost")
		s.cut()
		var next *rawSession
		var welcome wire.ServerMessage
		require.Eventually(t, func() bool { // the server notices the reset on its own time
			next, welcome = openResuming(t, alice, e.url, token)
			return welcome.State != nil
		}, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, &wire.SessionState{Active: "lost", InTx: true, TxDomain: "lost", TxPending: 1}, welcome.State)
		m := next.execOK(1, "COMMIT;")
		require.Contains(t, m.Result.Message, "committed")
		next.send(wire.ClientMessage{Type: wire.TypeExec, ID: 2, Text: "START;"})
		m = next.read()
		require.Equal(t, wire.TypeError, m.Type, "the committed START runs the domain")
		require.Contains(t, m.Error.Message, "already running")
		// Taken once: naming the token again gets nothing.
		_, again := openResuming(t, alice, e.url, token)
		require.Nil(t, again.State)
	})

	t.Run("closed by its client, reverted", func(t *testing.T) {
		s, token := openTx(t, alice, e.url, "closed")
		s.send(wire.ClientMessage{Type: wire.TypeClose})
		_, err := s.lr.Next()
		require.ErrorIs(t, err, io.EOF, "the server ends a session its client closed")
		_, welcome := openResuming(t, alice, e.url, token)
		require.Nil(t, welcome.State, "a closed session's transaction is not held")
	})

	t.Run("another identity gets nothing", func(t *testing.T) {
		s, token := openTx(t, alice, e.url, "theirs")
		_, welcome := openResuming(t, bob, e.url, token)
		require.Nil(t, welcome.State, "bob cannot take alice's live session over")
		s.execOK(5, "STOP;") // alice's session lives on, its transaction open
		s.cut()
		require.Eventually(t, func() bool { return e.srv.resumes.holds(token) }, 10*time.Second, 10*time.Millisecond)
		// Held as well as live, another identity's token is as good as none.
		_, welcome = openResuming(t, bob, e.url, token)
		require.Nil(t, welcome.State)
		require.Eventually(t, func() bool {
			_, w := openResuming(t, alice, e.url, token)
			return w.State != nil
		}, 10*time.Second, 10*time.Millisecond, "alice still takes it up")
	})

	t.Run("held past the resume timeout, reverted", func(t *testing.T) {
		s, token := openTx(t, alice, e.url, "lapsed")
		s.cut()
		require.Eventually(t, func() bool { return e.srv.resumes.holds(token) }, 10*time.Second, 10*time.Millisecond)
		fake.Advance(time.Minute)
		require.True(t, e.srv.resumes.holds(token), "held for the whole timeout")
		fake.Advance(time.Nanosecond)
		_, welcome := openResuming(t, alice, e.url, token)
		require.Nil(t, welcome.State)
	})

	t.Run("reconnect before the server noticed the loss", func(t *testing.T) {
		old, token := openTx(t, alice, e.url, "unnoticed")
		next, welcome := openResuming(t, alice, e.url, token)
		require.Equal(t, &wire.SessionState{Active: "unnoticed", InTx: true, TxDomain: "unnoticed", TxPending: 1}, welcome.State)
		_, err := old.lr.Next()
		require.Error(t, err, "the session taken over ended")
		next.execOK(1, "ROLLBACK;")
	})
}

// holds reports whether a transaction is held under token.
func (r *resumptions) holds(token string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(r.src.Monotonic())
	_, ok := r.held[token]
	return ok
}

// TestHeldTransactionsAreBounded: an identity holds at most its share of
// transactions, losing its oldest past it, without touching another's.
func TestHeldTransactionsAreBounded(t *testing.T) {
	fake := timesource.NewFake(0)
	r := newResumptions(fake, time.Minute, 2)
	hold := func(token, identity string) {
		st := &stream{token: token, identity: identity}
		r.register(st)
		r.end(st, session.HeldTransaction{}, true)
		fake.Advance(time.Second)
	}
	hold("b1", "bob")
	hold("a1", "alice")
	hold("a2", "alice")
	require.True(t, r.holds("a1"))
	hold("a3", "alice")
	require.False(t, r.holds("a1"), "alice's oldest goes once she holds more than her share")
	require.True(t, r.holds("a2"))
	require.True(t, r.holds("a3"))
	require.True(t, r.holds("b1"), "bob's is his own")
	r.end(&stream{token: "n1", identity: "alice"}, session.HeldTransaction{}, false)
	require.False(t, r.holds("n1"), "a session without a transaction holds nothing")
	require.True(t, r.holds("a2"))
}

// TestHeldTransactionsServerBound: past maxHeld the server's oldest goes,
// whichever identity held it.
func TestHeldTransactionsServerBound(t *testing.T) {
	fake := timesource.NewFake(0)
	r := newResumptions(fake, time.Hour, maxHeld+1)
	for i := range maxHeld + 1 {
		st := &stream{token: fmt.Sprint("t", i), identity: fmt.Sprint("id", i%7)}
		r.end(st, session.HeldTransaction{}, true)
		fake.Advance(time.Millisecond)
	}
	require.False(t, r.holds("t0"))
	require.True(t, r.holds("t1"))
	require.True(t, r.holds(fmt.Sprint("t", maxHeld)))
}

// SHOW ALL TRANSACTIONS on a server lists every session's open transaction
// with the verified identity of its caller, and a transaction held for a
// client that lost its connection as held, for that client's identity;
// the caller's own session is among them.
func TestShowAllTransactionsNamesTheirCallers(t *testing.T) {
	e := newTLSEnv(t, Config{Limits: Limits{ResumeTimeout: time.Minute}})
	alice, bob := e.clientHTTP(t, "alice"), e.clientHTTP(t, "bob")
	a, token := openTx(t, alice, e.url, "ours")
	b, _ := openResuming(t, bob, e.url, "")

	id := uint64(10)
	rows := func() [][]string {
		id++
		m := b.execOK(id, "SHOW ALL TRANSACTIONS;")
		require.NotNil(t, m.Result.Set)
		var out [][]string
		for _, r := range m.Result.Set.Rows {
			var row []string
			for _, v := range r[1:4] { // identity, state, domain
				row = append(row, string(v))
			}
			out = append(out, row)
		}
		return out
	}
	require.Equal(t, [][]string{{`"nspl-client://alice"`, `"open"`, `"ours"`}}, rows())

	a.cut()
	require.Eventually(t, func() bool { return e.srv.resumes.holds(token) }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, [][]string{{`"nspl-client://alice"`, `"held"`, `"ours"`}}, rows(),
		"held for alice, who lost her connection")

	for _, st := range []string{"CREATE DOMAIN theirs;", "USE theirs;", "BEGIN;"} {
		id++
		b.execOK(id, st)
	}
	require.Equal(t, [][]string{{`"nspl-client://bob"`, `"open"`, `"theirs"`}, {`"nspl-client://alice"`, `"held"`, `"ours"`}}, rows())
}
