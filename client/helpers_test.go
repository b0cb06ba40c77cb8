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

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
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
	ctx  context.Context // the test's deadline
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
	return &env{t: t, auth: auth, fake: fake, node: n, srv: srv, url: "https://" + ln.Addr().String(), ctx: ctxT(t)}
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

// event returns the next clock event, which must be of kind and about
// domain: an event of anything else fails the test instead of passing
// unread.
func (e *env) event(c *Client, domain string, kind follow.EventKind) follow.ClockEvent {
	e.t.Helper()
	ev, err := c.NextEvent(e.ctx)
	require.NoError(e.t, err, "waiting for a %v event of %q", kind, domain)
	require.Equal(e.t, domain, ev.Domain, "event %+v of another domain than %q", ev.Frame(), domain)
	require.Equal(e.t, kind, ev.Kind, "event %+v instead of a %v event", ev.Frame(), kind)
	return ev
}

// advanceTick waits until the node's producer has armed its timer for the
// tick due period from now, moves the node's fake clock by period and
// returns the next clock event, which must be tick id of domain.
func (e *env) advanceTick(c *Client, domain string, period time.Duration, id uint64) follow.ClockEvent {
	e.t.Helper()
	e.accept(period)
	ev := e.event(c, domain, follow.EventTick)
	require.Equal(e.t, id, ev.Clock.Tick.ID, "tick %+v instead of tick %d", ev.Clock.Tick, id)
	return ev
}

// accept waits until the node's producer has armed its timer for the tick
// due period from now and moves the node's fake clock by period, so that
// tick is produced.
func (e *env) accept(period time.Duration) {
	e.t.Helper()
	require.NoError(e.t, e.fake.BlockUntilDue(e.ctx, period), "the producer waits for its next tick")
	e.fake.Advance(period)
}

// waitAccepted waits on an observer of the node, never a sleep, until the
// domain's accepted tick of generation reaches id.
func (e *env) waitAccepted(domain string, generation, id uint64) {
	e.t.Helper()
	o, err := e.node.Observe(domain)
	require.NoError(e.t, err)
	for {
		if tick := o.Read().Tick; tick.Generation == generation && tick.ID >= id {
			return
		}
		require.NoError(e.t, o.Wait(e.ctx), "waiting for tick %d of generation %d of %q", id, generation, domain)
	}
}
