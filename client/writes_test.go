package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

// cutPoint is where writeCutter cuts the session of the first write it sees.
type cutPoint int

const (
	// cutBeforeSend drops the write on its way to the server and ends the
	// session: the server never runs it.
	cutBeforeSend cutPoint = iota
	// cutBeforeReply lets the server run and commit the write, then drops
	// its reply and ends the session: the client never hears the outcome.
	cutBeforeReply
)

// writeCutter is a transport that cuts the session carrying the first exec
// with a write id, at its cut point, once; every later session passes.
type writeCutter struct {
	base http.RoundTripper
	at   cutPoint

	mu     sync.Mutex
	cut    bool     // the one cut happened
	writes []string // the write ids of every exec sent to the server
}

func (w *writeCutter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || !strings.HasSuffix(req.URL.Path, wire.SessionPath) {
		return w.base.RoundTrip(req)
	}
	s := &cutSession{w: w, up: bufio.NewReader(req.Body), upBody: req.Body}
	req.Body = s.upstream()
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.downBody = resp.Body
	s.mu.Unlock()
	resp.Body = s.downstream(bufio.NewReader(resp.Body))
	return resp, nil
}

// cutSession is one session through the cutter.
type cutSession struct {
	w        *writeCutter
	up       *bufio.Reader
	upBody   io.ReadCloser
	mu       sync.Mutex
	downBody io.ReadCloser
	dropID   uint64 // the reply to drop (cutBeforeReply)
	cut      bool
}

// lineReader serves lines from next, one at a time.
type lineReader struct {
	buf   bytes.Buffer
	next  func() ([]byte, error)
	close func() error
}

func (l *lineReader) Read(p []byte) (int, error) {
	for l.buf.Len() == 0 {
		line, err := l.next()
		l.buf.Write(line)
		if err != nil && l.buf.Len() == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	return l.buf.Read(p)
}

func (l *lineReader) Close() error { return l.close() }

func (s *cutSession) upstream() io.ReadCloser {
	return &lineReader{close: s.upBody.Close, next: func() ([]byte, error) {
		line, err := s.up.ReadBytes('\n')
		var m wire.ClientMessage
		if json.Unmarshal(line, &m) != nil || m.Type != wire.TypeExec || m.Write == "" {
			return line, err
		}
		s.w.mu.Lock()
		s.w.writes = append(s.w.writes, m.Write)
		first := !s.w.cut
		s.w.cut = true
		s.w.mu.Unlock()
		if !first {
			return line, err
		}
		s.mu.Lock()
		s.cut = true
		if s.w.at == cutBeforeReply {
			s.dropID = m.ID
			s.mu.Unlock()
			return line, err
		}
		down := s.downBody
		s.mu.Unlock()
		if down != nil {
			_ = down.Close() // the client's read fails: the connection is lost
		}
		return nil, io.ErrUnexpectedEOF
	}}
}

func (s *cutSession) downstream(r *bufio.Reader) io.ReadCloser {
	return &lineReader{close: s.downBody.Close, next: func() ([]byte, error) {
		line, err := r.ReadBytes('\n')
		var m wire.ServerMessage
		s.mu.Lock()
		drop := s.dropID
		s.mu.Unlock()
		if drop != 0 && json.Unmarshal(line, &m) == nil && m.ID == drop && (m.Type == wire.TypeReply || m.Type == wire.TypeError) {
			_ = s.upBody.Close()
			return nil, errors.New("cut before the reply")
		}
		return line, err
	}}
}

func (w *writeCutter) sent() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

// TestWriteSurvivesLostConnection cuts the session of a write once, before
// the server has it and after it committed but before its reply: the
// client sends it again under the same write id on a new session, and the
// cluster applies it exactly once and answers with its one outcome. Sent
// twice as two writes, a CREATE, a DROP, a START or a STOP that committed
// would be refused the second time (the domain exists, is gone, runs, is
// stopped) and the catalog would move twice.
func TestWriteSurvivesLostConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    cutPoint
		setup string // run before the cut statement
		stmt  string
		want  string // the reply's message
	}{
		{"create, cut before send", cutBeforeSend, "", "CREATE DOMAIN d;", "created domain 'd'"},
		{"create, cut before reply", cutBeforeReply, "", "CREATE DOMAIN d;", "created domain 'd'"},
		{"start, cut before reply", cutBeforeReply, "CREATE DOMAIN d; USE d;", "START AT '2026-01-01T00:00:00Z';", "started domain 'd'"},
		{"stop, cut before reply", cutBeforeReply, "CREATE DOMAIN d; USE d; START AT '2026-01-01T00:00:00Z';", "STOP;", "stopped domain 'd'"},
		{"drop, cut before reply", cutBeforeReply, "CREATE DOMAIN d;", "DROP DOMAIN d;", "dropped domain 'd'"},
		{"alter, cut before reply", cutBeforeReply, "CREATE DOMAIN d; USE d;", "ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;", "set placement of domain 'd' to PREFER COLOCATION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			cutter := &writeCutter{base: newTransport(e.auth.client.ClientConfig("", ""), false), at: tc.at}
			c := e.dial(Config{Transport: cutter})
			if tc.setup != "" {
				// The setup's writes go through a cutter that has already
				// cut: only the statement under test is cut.
				cutter.mu.Lock()
				cutter.cut = true
				cutter.mu.Unlock()
				exec(t, c, tc.setup)
				cutter.mu.Lock()
				cutter.cut, cutter.writes = false, nil
				cutter.mu.Unlock()
			}
			before := e.node.CatalogRevision()
			res, err := c.ExecText(ctxT(t), tc.stmt)
			require.NoError(t, err)
			require.Len(t, res, 1)
			require.Equal(t, tc.want, res[0].Message)
			require.Equal(t, before+1, e.node.CatalogRevision(), "the write committed exactly once")
			sent := cutter.sent()
			require.Len(t, sent, 2, "sent once, cut, and sent again")
			require.Equal(t, sent[0], sent[1], "under the same write id")
			require.Contains(t, strings.Join(res[0].Warnings, "\n"), "sent again under its write id")
		})
	}
}

// TestTransactionSurvivesLostConnection: a client whose session is lost
// with a transaction open reconnects on its next statement, takes the
// transaction up with its queued steps (a TransactionResumed notice, no
// TransactionLost) and commits it there; a client that closes reverts its
// transaction, which a later session cannot take up.
func TestTransactionSurvivesLostConnection(t *testing.T) {
	e := newEnv(t, "")
	var mu sync.Mutex
	var notices []Notice
	c := e.dial(Config{Notify: func(n Notice) {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
	}})
	exec(t, c, "CREATE DOMAIN d; USE d; BEGIN; START AT '2026-01-01T00:00:00Z';")
	e.srv.CloseSessions() // as a lost transport would
	require.Eventually(t, func() bool { return c.Node() == "" }, 10*time.Second, time.Millisecond, "the client saw the loss")
	res := exec(t, c, "ALTER DOMAIN SET PLACEMENT PREFER COLOCATION; COMMIT;")
	require.Equal(t, "queued ALTER DOMAIN SET PLACEMENT PREFER COLOCATION (2 pending)", res[0].Message, "queued after the step the lost session held")
	require.Contains(t, res[1].Message, "committed")
	d, err := e.node.Domain("d")
	require.NoError(t, err)
	require.Equal(t, uint64(1), d.Generation, "the START of the lost session committed")
	mu.Lock()
	var kinds []NoticeKind
	for _, n := range notices {
		kinds = append(kinds, n.Kind)
	}
	mu.Unlock()
	require.Contains(t, kinds, TransactionResumed)
	require.NotContains(t, kinds, TransactionLost)
}
