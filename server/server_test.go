package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// insecureEnv serves one in-memory node over plain HTTP/2 on loopback.
func insecureEnv(t *testing.T, cfg Config) (string, *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	cfg.Node, cfg.Insecure, cfg.Logger = n, true, quietLogger()
	srv, err := New(cfg)
	require.NoError(t, err)
	ln, err := srv.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	return "http://" + ln.Addr().String(), srv
}

func h2c() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

func TestNewRefusesConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	defer n.Close()
	for _, cfg := range []Config{
		{},
		{Node: n},
		{Node: n, Insecure: true, TLS: &tls.Config{}},
	} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrConfig)
	}
	srv, err := New(Config{Node: n, Insecure: true})
	require.NoError(t, err)
	_, err = srv.Listen("0.0.0.0:0")
	require.ErrorIs(t, err, ErrInsecureAddress)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, srv.Serve(&wildcardListener{ln}), ErrInsecureAddress, "refused before serving")
}

// wildcardListener reports a non-loopback address.
type wildcardListener struct{ net.Listener }

func (w *wildcardListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 1} }

func TestSessionRefusals(t *testing.T) {
	url, _ := insecureEnv(t, Config{MaxSessions: 1})
	hc := h2c()
	defer hc.CloseIdleConnections()

	resp, err := hc.Get(url + wire.SessionPath)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	resp, err = http.Post(url+wire.SessionPath, "application/x-ndjson", strings.NewReader(""))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusHTTPVersionNotSupported, resp.StatusCode, "HTTP/1.1 cannot carry the stream")

	req, err := http.NewRequest(http.MethodPost, url+wire.SessionPath, strings.NewReader(""))
	require.NoError(t, err)
	req.Header.Set(wire.ReadConsistencyHeader, "strong")
	resp, err = hc.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "an unknown read consistency")
	require.Contains(t, string(body), "use local or linearizable")

	pr, pw := io.Pipe()
	first, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, first.StatusCode)
	lr := wire.NewLineReader(first.Body, wire.ServerMessageLimit)
	line, err := lr.Next()
	require.NoError(t, err)
	var welcome wire.ServerMessage
	require.NoError(t, json.Unmarshal(line, &welcome))
	require.Equal(t, wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: welcome.Node, IdleTimeout: int64(DefaultSessionIdleTimeout), Rows: true, WriteIDs: true, Resume: welcome.Resume}, welcome)
	require.Len(t, welcome.Resume, 32, "a resume token of 24 random bytes")

	second, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", strings.NewReader(""))
	require.NoError(t, err)
	second.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, second.StatusCode, "one session at most")

	// A message over the limit ends the session with an error saying so.
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("x", wire.ClientMessageLimit+3) + "\n"))
	}()
	requireClosedWith(t, lr, "message_too_large")
	pw.Close()
	first.Body.Close()
}

// requireClosedWith reads the session's closing error, which must carry
// code and no request id, and then the end of the stream.
func requireClosedWith(t *testing.T, lr *wire.LineReader, code string) {
	t.Helper()
	line, err := lr.Next()
	require.NoError(t, err, "the session sends its closing error before it ends")
	var m wire.ServerMessage
	require.NoError(t, json.Unmarshal(line, &m))
	require.Equal(t, wire.TypeError, m.Type, string(line))
	require.Zero(t, m.ID, "a session error answers no request")
	require.NotNil(t, m.Error)
	require.Equal(t, code, m.Error.Code, m.Error.Message)
	require.NotEmpty(t, m.Error.Message)
	_, err = lr.Next()
	require.ErrorIs(t, err, io.EOF, "nothing follows the closing error")
}

func TestSessionExecAndUnknownMessage(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	hc := h2c()
	defer hc.CloseIdleConnections()
	pr, pw := io.Pipe()
	resp, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	defer resp.Body.Close()
	lr := wire.NewLineReader(resp.Body, wire.ServerMessageLimit)
	_, err = lr.Next()
	require.NoError(t, err)
	send := func(s string) {
		_, err := pw.Write([]byte(s + "\n"))
		require.NoError(t, err)
	}
	read := func() wire.ServerMessage {
		line, err := lr.Next()
		require.NoError(t, err)
		var m wire.ServerMessage
		require.NoError(t, json.Unmarshal(line, &m))
		return m
	}
	send(`{"type":"exec","id":1,"text":"CREATE DOMAIN a;"}`)
	m := read()
	require.Equal(t, wire.TypeReply, m.Type)
	require.Equal(t, uint64(1), m.ID)
	require.Equal(t, "created domain 'a'", m.Result.Message)
	send(`{"type":"exec","id":2,"text":"USE a; USE a;"}`)
	m = read()
	require.Equal(t, wire.TypeError, m.Type, "one statement per request")
	require.Equal(t, "syntax", m.Error.Code)
	require.Equal(t, 8, m.Error.Column)
	send(`{"type":"domains","id":3}`)
	m = read()
	require.Equal(t, []string{"a"}, m.Names)
	require.Equal(t, 1, srv.Sessions())
	send(`{"type":"exec","id":4,"text":"USE b;"}`)
	m = read()
	require.Equal(t, wire.TypeError, m.Type, "a statement that runs and fails")
	// Statements are counted by outcome: the CREATE answered, the refused
	// text and the failed USE did not; the names request is no statement.
	metrics := metricsText(t, hc, url)
	require.Contains(t, metrics, `nspl_statements_total{outcome="ok"} 1`+"\n")
	require.Contains(t, metrics, `nspl_statements_total{outcome="error"} 2`+"\n")
	send(`{"type":"shutdown","id":5}`)
	requireClosedWith(t, lr, "protocol")
	pw.Close()
}

// TestCloseTwiceAndAfterClose checks that Close is safe to repeat, that the
// listener stops, and that a session reaching the handler after Close is
// refused rather than run past the Wait that Close already returned from.
func TestCloseTwiceAndAfterClose(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close())

	_, err := h2c().Post(url+wire.SessionPath, "application/x-ndjson", strings.NewReader(""))
	require.Error(t, err, "the listener is closed")

	req := httptest.NewRequest(http.MethodPost, wire.SessionPath, strings.NewReader(""))
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "shutting down")
	require.Zero(t, srv.Sessions())
}

// TestDrainEndsAttachmentsThenSessions checks the first phase of a graceful
// shutdown: the session's attached clocks each get a NodeShutdown end frame,
// the stream ends after them, a new session is refused, and the listener
// keeps answering everything else until Close.
func TestDrainEndsAttachmentsThenSessions(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	hc := h2c()
	defer hc.CloseIdleConnections()
	pr, pw := io.Pipe()
	defer pw.Close()
	resp, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	defer resp.Body.Close()
	lr := wire.NewLineReader(resp.Body, wire.ServerMessageLimit)
	read := func() wire.ServerMessage {
		line, err := lr.Next()
		require.NoError(t, err)
		var m wire.ServerMessage
		require.NoError(t, json.Unmarshal(line, &m))
		return m
	}
	require.Equal(t, wire.TypeWelcome, read().Type)
	for i, text := range []string{"CREATE DOMAIN b;", "CREATE DOMAIN a;", "USE b;", "ATTACH DOMAIN CLOCK;", "USE a;", "ATTACH DOMAIN CLOCK;"} {
		_, err := pw.Write([]byte(`{"type":"exec","id":` + strconv.Itoa(i+1) + `,"text":"` + text + `"}` + "\n"))
		require.NoError(t, err)
		m := read()
		require.Equal(t, wire.TypeReply, m.Type, "%s: %+v", text, m)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- srv.Drain(ctx) }()
	var ends []string
	for {
		line, err := lr.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF, "the stream ends after the end frames")
			break
		}
		var m wire.ServerMessage
		require.NoError(t, json.Unmarshal(line, &m))
		require.Equal(t, wire.TypeFrame, m.Type)
		f, err := wire.DecodeFrame(m.Frame)
		require.NoError(t, err)
		if f.Kind == wire.FrameEnd {
			ends = append(ends, f.Domain+" "+f.Reason.String())
		}
	}
	require.Equal(t, []string{"a NodeShutdown", "b NodeShutdown"}, ends)
	require.NoError(t, <-drained)
	require.Zero(t, srv.Sessions())

	r2, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", strings.NewReader(""))
	require.NoError(t, err)
	defer r2.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, r2.StatusCode, "a draining server admits no session")
	h, err := hc.Get(url + wire.HealthPath)
	require.NoError(t, err)
	defer h.Body.Close()
	require.Equal(t, http.StatusOK, h.StatusCode, "the listener serves the rest while sessions drain")
}

// TestCloseEndsPeerStreams: Close after a Drain ends a peer's long-lived
// request (a node's installed stream) instead of waiting out the close
// grace for it. The grace runs on the server's fake clock, which the test
// never advances, so a stream that outlived Close would hold it forever.
func TestCloseEndsPeerStreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	ca := testpki.New(t)
	opened := make(chan struct{})
	peer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(opened)
		<-r.Context().Done()
	})
	srv, err := New(Config{Node: n, TLS: ca.Node("n1").ServerConfig(pki.ServerOptions{AllowNoClientCert: true}),
		Peer: peer, TimeSource: timesource.NewFake(0), Logger: quietLogger()})
	require.NoError(t, err)
	ln, err := srv.Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	tr := &http.Transport{TLSClientConfig: ca.Node("n2").ClientConfig("", ""), ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + wire.PeerPrefix + "stream")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	<-opened

	require.NoError(t, srv.Drain(ctx))
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("Close waited for the peer's stream")
	}
	require.NoError(t, <-served)
}
