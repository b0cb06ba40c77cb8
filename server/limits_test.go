package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// testSession is one session protocol stream a test drives line by line.
type testSession struct {
	t    *testing.T
	pw   *io.PipeWriter
	body io.ReadCloser
	lr   *wire.LineReader
}

// openSession opens a session with hc and reads its welcome.
func openSession(t *testing.T, hc *http.Client, url string) *testSession {
	t.Helper()
	pr, pw := io.Pipe()
	resp, err := hc.Post(url+wire.SessionPath, "application/x-ndjson", pr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ts := &testSession{t: t, pw: pw, body: resp.Body, lr: wire.NewLineReader(resp.Body, wire.ServerMessageLimit)}
	t.Cleanup(func() {
		_ = pw.Close()
		_ = resp.Body.Close()
	})
	require.Equal(t, wire.TypeWelcome, ts.read().Type)
	return ts
}

// write sends raw bytes, as they are.
func (ts *testSession) write(s string) {
	ts.t.Helper()
	_, err := ts.pw.Write([]byte(s))
	require.NoError(ts.t, err)
}

func (ts *testSession) read() wire.ServerMessage {
	ts.t.Helper()
	line, err := ts.lr.Next()
	require.NoError(ts.t, err)
	var m wire.ServerMessage
	require.NoError(ts.t, json.Unmarshal(line, &m))
	return m
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// metricsText returns the server's /metrics.
func metricsText(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	resp, err := hc.Get(url + wire.MetricsPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestMalformedInputGetsAnErrorFrame(t *testing.T) {
	tests := []struct {
		name string
		in   []string // lines sent; every one before the last is answered
		code string
	}{
		{"not json", []string{`exec USE a;`}, "protocol"},
		{"trailing bracket", []string{`{"type":"domains","id":1}]`}, "protocol"},
		{"trailing object", []string{`{"type":"domains","id":1} {}`}, "protocol"},
		{"unknown field", []string{`{"type":"domains","id":1,"as":"root"}`}, "protocol"},
		{"unknown type", []string{`{"type":"shutdown","id":1}`}, "protocol"},
		{"not an object", []string{`[1]`}, "protocol"},
		{"id zero", []string{`{"type":"domains","id":0}`}, "request_order"},
		{"repeated id", []string{`{"type":"domains","id":4}`, `{"type":"domains","id":4}`}, "request_order"},
		{"decreasing id", []string{`{"type":"domains","id":4}`, `{"type":"exec","id":3,"text":"LIST DOMAINS;"}`}, "request_order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := insecureEnv(t, Config{})
			hc := h2c()
			defer hc.CloseIdleConnections()
			ts := openSession(t, hc, url)
			for i, line := range tt.in {
				ts.write(line + "\n")
				if i < len(tt.in)-1 {
					require.Equal(t, wire.TypeNames, ts.read().Type)
				}
			}
			requireClosedWith(t, ts.lr, tt.code)
			require.Contains(t, metricsText(t, hc, url), `nspl_sessions_closed_total{reason="`+tt.code+`"} 1`)
		})
	}
}

func TestDecodeClientMessage(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want wire.ClientMessage
		ok   bool
	}{
		{`{"type":"exec","id":1,"text":"USE a;"}`, wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "USE a;"}, true},
		{` {"type":"ping"} `, wire.ClientMessage{Type: wire.TypePing}, true},
		{`{"type":"cancel","id":9}`, wire.ClientMessage{Type: wire.TypeCancel, ID: 9}, true},
		{`{"type":"exec","id":1}]`, wire.ClientMessage{}, false},
		{`{"type":"exec","id":1}}`, wire.ClientMessage{}, false},
		{`{"type":"exec","id":1}x`, wire.ClientMessage{}, false},
		{`{"type":"exec","id":-1}`, wire.ClientMessage{}, false},
		{`{"type":"exec","id":1.5}`, wire.ClientMessage{}, false},
		{`{"type":"reply","id":1}`, wire.ClientMessage{}, false},
		{`null`, wire.ClientMessage{}, false},
		{``, wire.ClientMessage{}, false},
	} {
		got, err := wire.DecodeClientMessage([]byte(tt.in))
		if !tt.ok {
			require.ErrorIs(t, err, ErrProtocol, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, got)
	}
}

func FuzzDecodeClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"exec","id":1,"text":"USE a;"}`, `{"type":"ping"}`, `{"type":"cancel","id":2}`,
		`{"type":"domains","id":3}`, `{"type":"exec","id":1}]`, `{"type":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := wire.DecodeClientMessage(b)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("a refusal that is not ErrProtocol: %v", err)
			}
			return
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := wire.DecodeClientMessage(enc)
		if err != nil {
			t.Fatalf("a decoded message does not decode again: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip changed the message: %+v != %+v", again, m)
		}
	})
}

// fakeEnv serves one in-memory node with limits on a fake time source and
// returns the source, an HTTP/2 client closed with the test, and the URL.
func fakeEnv(t *testing.T, limits Limits) (*timesource.Fake, *http.Client, string) {
	t.Helper()
	fake := timesource.NewFake(0)
	url, _ := insecureEnv(t, Config{TimeSource: fake, Limits: limits})
	hc := h2c()
	t.Cleanup(hc.CloseIdleConnections)
	return fake, hc, url
}

func TestIdleSessionClosedWithReason(t *testing.T) {
	const idle = 10 * time.Minute
	fake, hc, url := fakeEnv(t, Limits{SessionIdleTimeout: idle})
	ts := openSession(t, hc, url)
	require.NoError(t, fake.BlockUntil(ctxT(t), 1))
	fake.Advance(idle)
	requireClosedWith(t, ts.lr, "session_idle")
	require.Contains(t, metricsText(t, hc, url), `nspl_sessions_closed_total{reason="session_idle"} 1`)
}

func TestPingKeepsSessionOpen(t *testing.T) {
	const idle = 10 * time.Minute
	fake, hc, url := fakeEnv(t, Limits{SessionIdleTimeout: idle})
	ts := openSession(t, hc, url)
	require.NoError(t, fake.BlockUntil(ctxT(t), 1))
	for range 3 {
		fake.Advance(idle - time.Second)
		ts.write(`{"type":"ping"}` + "\n")
		// The ping is read once the idle timer is armed a whole period
		// ahead again.
		ctx := ctxT(t)
		for {
			if d, ok := fake.Next(); ok && d == idle {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal("the ping did not re-arm the idle timer")
			case <-time.After(time.Millisecond):
			}
		}
	}
	ts.write(`{"type":"domains","id":1}` + "\n")
	require.Equal(t, wire.TypeNames, ts.read().Type, "pinged sessions stay open")
}

func TestSlowMessageIsCut(t *testing.T) {
	const bound = 30 * time.Second
	fake, hc, url := fakeEnv(t, Limits{MessageTimeout: bound})
	ts := openSession(t, hc, url)
	msg := `{"type":"exec","id":1,"text":"LIST DOMAINS;"}`
	ts.write(msg[:1])
	// The first byte arms the message timer beside the idle timer.
	require.NoError(t, fake.BlockUntil(ctxT(t), 2))
	for i := 1; i <= int(bound/time.Second); i++ {
		ts.write(msg[i : i+1]) // one byte a second never finishes in time
		fake.Advance(time.Second)
	}
	requireClosedWith(t, ts.lr, "message_timeout")
	require.Contains(t, metricsText(t, hc, url), `nspl_sessions_closed_total{reason="message_timeout"} 1`)
}

// tlsEnv serves one in-memory node over TLS on loopback; the returned
// authority issues client certificates.
type tlsEnv struct {
	url string
	srv *Server
	ca  *testpki.Authority
}

func newTLSEnv(t *testing.T, cfg Config) *tlsEnv {
	t.Helper()
	ca := testpki.New(t)
	nm := ca.Node("n1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	cfg.Node, cfg.Logger = n, quietLogger()
	cfg.TLS = nm.ServerConfig(pki.ServerOptions{AllowNoClientCert: cfg.Token != ""})
	srv, err := New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	return &tlsEnv{url: "https://" + ln.Addr().String(), srv: srv, ca: ca}
}

// clientHTTP returns an HTTP/2 client presenting a client certificate of
// name, or none when name is empty.
func (e *tlsEnv) clientHTTP(t *testing.T, name string) *http.Client {
	t.Helper()
	m := &pki.Material{Pool: mustPool(t, e.ca)}
	if name != "" {
		m = e.ca.Client(name)
	}
	var p http.Protocols
	p.SetHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: m.ClientConfig("", ""), Protocols: &p}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

func mustPool(t *testing.T, ca *testpki.Authority) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.CA.CertPEM))
	return pool
}

func TestPerIdentitySessionShare(t *testing.T) {
	e := newTLSEnv(t, Config{Limits: Limits{MaxSessionsPerIdentity: 2}})
	alice := e.clientHTTP(t, "alice")
	for range 2 {
		openSession(t, alice, e.url)
	}
	resp, err := alice.Post(e.url+wire.SessionPath, "application/x-ndjson", strings.NewReader(""))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "a third session of one identity is refused")
	require.Contains(t, string(b), "nspl-client://alice")

	bob := e.clientHTTP(t, "bob")
	openSession(t, bob, e.url) // another identity still gets in
	require.Equal(t, 3, e.srv.Sessions())
	require.Contains(t, metricsText(t, bob, e.url), `nspl_session_refusals_total{reason="identity"} 1`)
}

// TestIdleConnectionClosed holds a connection that completed TLS without a
// certificate and the HTTP/2 preface and then sends nothing: the server
// closes it once the idle timeout passes.
func TestIdleConnectionClosed(t *testing.T) {
	e := newTLSEnv(t, Config{Token: "secret", Limits: Limits{IdleTimeout: 200 * time.Millisecond}})
	c, err := tls.Dial("tcp", strings.TrimPrefix(e.url, "https://"), &tls.Config{RootCAs: mustPool(t, e.ca), NextProtos: []string{"h2"}, ServerName: "localhost"})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, "h2", c.ConnectionState().NegotiatedProtocol)
	_, err = c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00")) // the preface and an empty SETTINGS frame
	require.NoError(t, err)
	// A generous test deadline: the server's own bound is far shorter.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = io.Copy(io.Discard, c)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the server must close an idle connection: %v", err)
	waitMetric(t, e.clientHTTP(t, "alice"), e.url, `nspl_connections_unserved_total{stage="request"} 1`)
}

// waitMetric reads /metrics until it has line: net/http reports a closed
// connection after the peer may already have seen it close.
func waitMetric(t *testing.T, hc *http.Client, url, line string) {
	t.Helper()
	ctx := ctxT(t)
	for !strings.Contains(metricsText(t, hc, url), line) {
		select {
		case <-ctx.Done():
			t.Fatalf("/metrics never showed %s:\n%s", line, metricsText(t, hc, url))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestHandshakeTimeout holds a TCP connection that never starts TLS: the
// server closes it once the handshake timeout passes.
func TestHandshakeTimeout(t *testing.T) {
	e := newTLSEnv(t, Config{Limits: Limits{HandshakeTimeout: 200 * time.Millisecond}})
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "https://"))
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = io.Copy(io.Discard, c)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the server must close a connection that does not shake hands: %v", err)
	waitMetric(t, e.clientHTTP(t, "alice"), e.url, `nspl_connections_unserved_total{stage="handshake"} 1`)
}

func TestLimitsRefuseNegative(t *testing.T) {
	for _, l := range []Limits{
		{HandshakeTimeout: -1}, {IdleTimeout: -1}, {SessionIdleTimeout: -1}, {MessageTimeout: -1}, {MaxSessionsPerIdentity: -1},
		{UploadTimeout: -1}, {ResumeTimeout: -1}, {TokenGuessesPerAddress: -1}, {TokenGuesses: -1},
	} {
		_, err := l.withDefaults()
		require.ErrorIs(t, err, ErrConfig)
	}
	l, err := Limits{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Limits{HandshakeTimeout: DefaultHandshakeTimeout, IdleTimeout: DefaultIdleTimeout, SessionIdleTimeout: DefaultSessionIdleTimeout,
		MessageTimeout: DefaultMessageTimeout, MaxSessionsPerIdentity: DefaultMaxSessionsPerIdentity, UploadTimeout: DefaultUploadTimeout, ResumeTimeout: DefaultResumeTimeout,
		TokenGuessesPerAddress: DefaultTokenGuessesPerAddress, TokenGuesses: DefaultTokenGuesses}, l)
}

// TestSlowClusterRequestBodyIsCut: a remove request whose body trickles is
// answered 408 once the message timeout passes, instead of holding its
// stream; a body sent whole is read and answered.
func TestSlowClusterRequestBodyIsCut(t *testing.T) {
	const bound = 30 * time.Second
	fake, hc, url := fakeEnv(t, Limits{MessageTimeout: bound})

	resp, err := hc.Post(url+wire.RemovePath, "application/json", strings.NewReader(`{"node":"n2"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode, "read whole, then refused: not a cluster member")

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"node":`)) }()
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := hc.Post(url+wire.RemovePath, "application/json", pr)
		got <- answer{resp, err}
	}()
	require.NoError(t, fake.BlockUntil(ctxT(t), 1), "the body's timer is armed")
	fake.Advance(bound - 1)
	select {
	case a := <-got:
		t.Fatalf("answered before the bound: %v %v", a.resp, a.err)
	default:
	}
	fake.Advance(1)
	a := <-got
	require.NoError(t, a.err)
	defer a.resp.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, a.resp.StatusCode)
	b, err := io.ReadAll(a.resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(b), "did not arrive within 30s")
}

// TestSessionTransactionsOnServerClock: a served session's transaction
// idle time runs on the server's time source, so an idle transaction is
// reverted by the next statement, which reports it by its code.
func TestSessionTransactionsOnServerClock(t *testing.T) {
	fake, hc, url := fakeEnv(t, Limits{SessionIdleTimeout: 24 * time.Hour})
	ts := openSession(t, hc, url)
	for i, text := range []string{"CREATE DOMAIN d;", "USE d;", "BEGIN;"} {
		ts.write(fmt.Sprintf(`{"type":"exec","id":%d,"text":%q}`+"\n", i+1, text))
		m := ts.read()
		require.Nil(t, m.Error, text)
		require.Equal(t, uint64(i+1), m.ID)
	}
	fake.Advance(session.DefaultTransactionIdleTimeout + time.Second)
	ts.write(`{"type":"exec","id":4,"text":"SHOW TRANSACTIONS;"}` + "\n")
	m := ts.read()
	require.Equal(t, uint64(4), m.ID)
	require.NotNil(t, m.Error)
	require.Equal(t, "transaction_expired", m.Error.Code)
}
