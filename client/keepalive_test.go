package client

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

// lineServer is a session protocol server that announces an idle bound,
// hands every client line to lines and answers an exec with answer, then
// ends the stream.
type lineServer struct {
	idle   time.Duration
	lines  chan string
	answer wire.ServerMessage
}

func (s *lineServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	_ = enc.Encode(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "fake", IdleTimeout: int64(s.idle)})
	_ = rc.Flush()
	lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
	for {
		l, err := lr.Next()
		if err != nil {
			return
		}
		select {
		case s.lines <- string(l):
		case <-r.Context().Done():
			return
		}
		var m wire.ClientMessage
		if json.Unmarshal(l, &m) == nil && m.Type == wire.TypeExec {
			_ = enc.Encode(s.answer)
			_ = rc.Flush()
			return
		}
	}
}

func (s *lineServer) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-ctxT(t).Done():
		t.Fatal("no line arrived")
		return ""
	}
}

func TestClientPingsWithinTheIdleBound(t *testing.T) {
	const idle = 30 * time.Second
	ls := &lineServer{idle: idle, lines: make(chan string, 16)}
	url := testserve.H2C(t, ls)
	cfake := timesource.NewFake(0)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: cfake, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	for range 3 {
		require.Equal(t, idle/3, nextTimer(t, cfake), "the client pings at a third of the server's idle bound")
		cfake.Advance(idle / 3)
		require.JSONEq(t, `{"type":"ping","id":0}`, ls.next(t))
	}
}

func TestClientSurfacesSessionError(t *testing.T) {
	ls := &lineServer{lines: make(chan string, 16), answer: wire.ServerMessage{Type: wire.TypeError,
		Error: &wire.Error{Line: 1, Column: 1, Code: "protocol", Message: "malformed session protocol message: trailing data after the object"}}}
	url := testserve.H2C(t, ls)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: timesource.NewFake(0), Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ExecText(ctxT(t), "LIST DOMAINS;")
	require.ErrorIs(t, err, wire.ErrProtocol, "the server's reason reaches the caller")
	require.ErrorIs(t, err, ErrConnectionLost)
	require.Contains(t, err.Error(), "trailing data after the object")
}

// TestPingsKeepAnIdleSessionOpen runs a session that executes nothing for
// longer than the server's idle bound: the client's pings keep it open.
func TestPingsKeepAnIdleSessionOpen(t *testing.T) {
	const idle = 30 * time.Second
	sfake := timesource.NewFake(0)
	e := newEnvWith(t, "", func(cfg *server.Config) {
		cfg.TimeSource, cfg.Limits.SessionIdleTimeout = sfake, idle
	})
	cfake := timesource.NewFake(0)
	c := e.dial(Config{TimeSource: cfake})
	first := c.currentConn()
	require.NotNil(t, first)
	require.NoError(t, sfake.BlockUntil(ctxT(t), 1))
	for i := range 5 {
		require.Equal(t, idle/3, nextTimer(t, cfake))
		cfake.Advance(idle / 3)
		if i > 0 {
			// The server has read the ping once its idle timer is a whole
			// bound ahead again.
			ctx := ctxT(t)
			for {
				if d, ok := sfake.Next(); ok && d == idle {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatal("the server did not read the ping")
				case <-time.After(time.Millisecond):
				}
			}
		}
		sfake.Advance(idle / 3)
	}
	// The server's clock passed the idle bound more than once.
	exec(t, c, "LIST DOMAINS;")
	require.Same(t, first, c.currentConn(), "the first session still serves")
	require.NoError(t, first.lostError())
}

func (c *Client) currentConn() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}
