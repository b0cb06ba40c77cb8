package client

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/runtime/timesource"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake UTC nodes start at: 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// authority is a test CA with a node and a client certificate.
type authority struct {
	ca     *pki.CA
	node   *pki.Material
	client *pki.Material
}

func newAuthority(t testing.TB) *authority {
	t.Helper()
	a := testpki.New(t)
	return &authority{ca: a.CA, node: a.Node("n1"), client: a.Client("alice")}
}

// tokenOnly is a TLS config that trusts the CA and presents no certificate.
func (a *authority) tokenOnly() *tls.Config {
	return &tls.Config{RootCAs: a.client.Pool, MinVersion: tls.VersionTLS12}
}

// env is one node on a fake clock served over real TLS on 127.0.0.1.
type env struct {
	t    testing.TB
	auth *authority
	fake *timesource.Fake
	node *node.Node
	srv  *server.Server
	url  string
}

func newEnv(t testing.TB, token string) *env {
	t.Helper()
	return newEnvWith(t, token, nil)
}

// newEnvWith is newEnv with the server's configuration adjusted by adjust.
func newEnvWith(t testing.TB, token string, adjust func(*server.Config)) *env {
	t.Helper()
	auth := newAuthority(t)
	fake := timesource.NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Name: "n1", Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	require.NoError(t, n.WaitInstalled(ctx))
	cfg := server.Config{Node: n, TLS: auth.node.ServerConfig(pki.ServerOptions{AllowNoClientCert: token != ""}), Token: token, Logger: quietLogger()}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := server.New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	return &env{t: t, auth: auth, fake: fake, node: n, srv: srv, url: "https://" + ln.Addr().String()}
}

// dial connects with the client certificate and a fake client clock.
func (e *env) dial(cfg Config) *Client {
	e.t.Helper()
	if cfg.URLs == nil {
		cfg.URLs = []string{e.url}
	}
	if cfg.TLS == nil {
		cfg.TLS = e.auth.client.ClientConfig("", "")
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	c, err := Dial(ctxT(e.t), cfg)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { require.NoError(e.t, c.Close()) })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// exec runs text and requires success.
func exec(t testing.TB, c *Client, text string) []wire.Result {
	t.Helper()
	res, err := c.ExecText(ctxT(t), text)
	require.NoError(t, err)
	return res
}

// nextFrame reads one clock event within the test's deadline and returns
// the frame it reports.
func nextFrame(t testing.TB, c *Client) wire.Frame {
	t.Helper()
	ev, err := c.NextEvent(ctxT(t))
	require.NoError(t, err)
	return ev.Frame()
}

// waitTicks advances the node's fake clock one period at a time until the
// client has read a tick event of domain with an id of at least id.
func (e *env) waitTick(c *Client, domain string, period time.Duration) wire.Frame {
	e.t.Helper()
	for i := 0; i < 100; i++ {
		e.fake.Advance(period)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		ev, err := c.NextEvent(ctx)
		cancel()
		if f := ev.Frame(); err == nil && f.Domain == domain && f.Kind == wire.FrameTick {
			return f
		}
	}
	e.t.Fatalf("no tick of %s arrived", domain)
	return wire.Frame{}
}
