package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

func TestRoundTripMatchesLocalSession(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	require.Equal(t, "n1", c.Node())
	script := "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms; CREATE DOMAIN scratch; USE prod; START AT '2026-01-01T00:00:00Z' TIME RATE 60; LIST DOMAINS; DESCRIBE DOMAIN; SHOW CLUSTER STATUS;"
	remote := exec(t, c, script)

	local := session.New(e.node, session.Options{Logger: quietLogger()})
	defer local.Close()
	_, err := local.ExecText(ctxT(t), "USE prod;")
	require.NoError(t, err)
	for _, stmt := range []string{"LIST DOMAINS;", "DESCRIBE DOMAIN;", "SHOW CLUSTER STATUS;"} {
		want, err := local.ExecText(ctxT(t), stmt)
		require.NoError(t, err)
		i := map[string]int{"LIST DOMAINS;": 4, "DESCRIBE DOMAIN;": 5, "SHOW CLUSTER STATUS;": 6}[stmt]
		require.Equal(t, want[0], remote[i], stmt)
	}
	require.Equal(t, "prod", c.ActiveDomain())
	names, err := c.DomainNames(ctxT(t))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"prod", "scratch"}, names)

	exec(t, c, "BEGIN; STOP;")
	d, pending, ok := c.InTransaction()
	require.True(t, ok)
	require.Equal(t, "prod", d)
	require.Equal(t, 1, pending)
	exec(t, c, "REVERT;")
	_, _, ok = c.InTransaction()
	require.False(t, ok)
}

func TestPositionedErrors(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	exec(t, c, "CREATE DOMAIN a;")
	tests := []struct {
		name string
		text string
		pos  grammar.Position
		want error
		code lifecycle.Code
	}{
		{name: "syntax error points into the text", text: "CREATE DOMAIN b;\n  LIST DOMAIN;", pos: grammar.Position{Offset: 24, Line: 2, Column: 8}, want: grammar.ErrSyntax},
		{name: "refusal at the statement start", text: "LIST DOMAINS;\n   STOP;", pos: grammar.Position{Offset: 17, Line: 2, Column: 4}, want: session.ErrNoActiveDomain},
		{name: "commit without a transaction", text: "COMMIT;", pos: grammar.Position{Line: 1, Column: 1}, want: session.ErrNotInTransaction},
		{name: "lifecycle error survives", text: "  CREATE DOMAIN a;", pos: grammar.Position{Offset: 2, Line: 1, Column: 3}, code: lifecycle.CodeDomainExists},
		{name: "not found", text: "USE nope;", pos: grammar.Position{Line: 1, Column: 1}, code: lifecycle.CodeDomainNotFound},
		{name: "detach without attach", text: "USE a; DETACH DOMAIN CLOCK;", pos: grammar.Position{Offset: 7, Line: 1, Column: 8}, want: session.ErrNotAttached},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.ExecText(ctxT(t), tt.text)
			var ge *follow.StatementError
			require.ErrorAs(t, err, &ge)
			require.Equal(t, tt.pos, ge.Pos)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			if tt.code != "" {
				le := lifecycle.AsError(err)
				require.NotNil(t, le)
				require.Equal(t, tt.code, le.Code)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t, "s3cret")
	other := newAuthority(t)
	tests := []struct {
		name    string
		cfg     Config
		wantErr error
		hint    string
	}{
		{name: "client certificate", cfg: Config{TLS: e.auth.client.ClientConfig("", "")}},
		{name: "token without a certificate", cfg: Config{TLS: e.auth.tokenOnly(), Token: "s3cret"}},
		{name: "no certificate and no token", cfg: Config{TLS: e.auth.tokenOnly()}, wantErr: ErrUnauthorized},
		{name: "wrong token", cfg: Config{TLS: e.auth.tokenOnly(), Token: "s3cret2"}, wantErr: ErrUnauthorized},
		{name: "certificate of another CA", cfg: Config{TLS: func() *tlsConfig {
			tc := other.client.ClientConfig("", "")
			tc.RootCAs = e.auth.client.Pool // trusts the server, presents a foreign certificate
			return tc
		}()}},
		{name: "server of another CA", cfg: Config{TLS: other.client.ClientConfig("", "")}, hint: "give the cluster's CA certificate (nspl --ca FILE)"},
		{name: "host the certificate does not name", cfg: Config{TLS: e.auth.client.ClientConfig("elsewhere.example", "")}, hint: "does not name the URL's host"},
		{name: "plain HTTP to a TLS node", cfg: Config{URLs: []string{"http://" + strings.TrimPrefix(e.url, "https://")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if cfg.URLs == nil {
				cfg.URLs = []string{e.url}
			}
			cfg.Logger = quietLogger()
			c, err := Dial(ctxT(t), cfg)
			if tt.name == "client certificate" || tt.name == "token without a certificate" {
				require.NoError(t, err)
				exec(t, c, "LIST DOMAINS;")
				require.NoError(t, c.Close())
				return
			}
			require.Error(t, err)
			var ce *ConnectError
			require.ErrorAs(t, err, &ce)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.ErrorContains(t, err, tt.hint)
		})
	}
}

func TestConnectErrorSaysWhatToDo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	tests := []struct {
		name string
		url  string // "" is https://127.0.0.1:1
		err  error
		hint string
	}{
		{name: "refused dial", err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
			hint: "check that the node runs"},
		{name: "unknown authority", err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, hint: "nspl --ca FILE"},
		{name: "wrong host", err: x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}, hint: "--host HOST"},
		{name: "not TLS", err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, hint: "connect with http://"},
		{name: "refused credentials", err: ErrUnauthorized, hint: ""},
		{name: "plain HTTP to TLS", url: "http://127.0.0.1:1", err: fmt.Errorf("read: %w", io.ErrUnexpectedEOF), hint: "connect with https://"},
		{name: "plain HTTP reset", url: "http://127.0.0.1:1", err: os.NewSyscallError("read", syscall.ECONNRESET), hint: "connect with https://"},
		{name: "EOF over TLS says nothing of TLS", err: io.ErrUnexpectedEOF, hint: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if url == "" {
				url = "https://127.0.0.1:1"
			}
			msg := (&ConnectError{URL: url, Err: tt.err}).Error()
			if tt.hint == "" {
				require.Equal(t, "connect to "+url+": "+tt.err.Error(), msg)
				return
			}
			require.Contains(t, msg, tt.hint)
		})
	}
	_, err = Dial(ctxT(t), Config{URLs: []string{"https://" + closed}, Logger: quietLogger()})
	require.ErrorContains(t, err, "nothing listens there", "a real refused dial")

	// A real TLS listener dialled with http://.
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, err = Dial(ctxT(t), Config{URLs: []string{"http://" + tlsSrv.Listener.Addr().String()}, Logger: quietLogger()})
	require.ErrorContains(t, err, "if it serves TLS, connect with https://", "plain HTTP to a real TLS listener")
}

func TestMetricsAndHealth(t *testing.T) {
	e := newEnv(t, "tok")
	c := e.dial(Config{})
	exec(t, c, "CREATE DOMAIN a; USE a; ATTACH DOMAIN CLOCK;")
	hc := &http.Client{Transport: newTransport(e.auth.tokenOnly(), false)}
	defer hc.CloseIdleConnections()
	get := func(path, token string) (int, string) {
		req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, e.url+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get(wire.HealthPath, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	code, _ = get(wire.MetricsPath, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body = get(wire.MetricsPath, "tok")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "nspl_sessions 1\n")
	require.Contains(t, body, "nspl_clock_attachments 1\n")
	code, _ = get(wire.PeerPrefix+"status", "tok")
	require.Equal(t, http.StatusNotFound, code, "no peer handler is mounted; a token never reaches it anyway")
}

func TestInsecureOnlyOnLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:7401", true}, {"[::1]:7401", true}, {"localhost:7401", true}, {"127.0.0.2:1", true},
		{"0.0.0.0:7401", false}, {"10.0.0.1:7401", false}, {":7401", false}, {"example.com:7401", false}, {"nope", false},
	} {
		err := wire.CheckLoopback(tt.addr)
		if tt.ok {
			require.NoError(t, err, tt.addr)
		} else {
			require.ErrorIs(t, err, server.ErrInsecureAddress, tt.addr)
		}
	}
	for _, tt := range []struct {
		url     string
		wantErr error
	}{
		{"http://10.0.0.1:7401", ErrInsecureURL},
		{"http://example.com", ErrInsecureURL},
		{"ftp://127.0.0.1:1", ErrConfig},
		{"127.0.0.1:7401", ErrConfig},
	} {
		_, err := Dial(ctxT(t), Config{URLs: []string{tt.url}})
		require.ErrorIs(t, err, tt.wantErr, tt.url)
	}
	_, err := Dial(ctxT(t), Config{})
	require.ErrorIs(t, err, ErrConfig)
	_, err = Dial(ctxT(t), Config{URLs: []string{"https://127.0.0.1:1"}, ReadConsistency: "strong"})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "use local or linearizable")
}

// The delivery order as a remote client observes it, through the server's
// stream and the client's follow, every event read and none passed over:
// the attach reply before the first event of its attachment, here the tick
// the paced clock already held when it attached; ticks of the reply's
// generation in increasing order; a new generation's state before its
// ticks; nothing after the detach reply, though the domain ticks and stops
// after it, fenced by another domain's event that must come after; and
// the end last, fenced the same way.
func TestAttachDeliveryOrder(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	exec(t, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN other; USE prod; START AT NOW;")
	e.waitAccepted("prod", 1, 1)
	res := exec(t, c, "ATTACH DOMAIN CLOCK;")[0]
	require.NotNil(t, res.Clock)
	require.Equal(t, clock.Paced, res.Clock.State)
	require.Equal(t, uint64(1), res.Clock.Generation)
	require.Equal(t, []string{"prod"}, c.Followed())

	ev := e.event(c, "prod", follow.EventTick)
	require.Equal(t, res.Attachment, ev.Attachment)
	require.Equal(t, *res.Clock, ev.Clock.Observed, "the tick is of the clock the reply carried")
	require.Equal(t, follow.Tick{Generation: 1, ID: 1, Boundary: t0, AuthorityUTC: t0}, ev.Clock.Tick)
	for id := uint64(2); id <= 4; id++ {
		require.Equal(t, uint64(1), e.advanceTick(c, "prod", time.Second, id).Clock.Tick.Generation)
	}

	exec(t, c, "STOP;")
	ev = e.event(c, "prod", follow.EventState)
	require.Equal(t, clock.Observed{Generation: 1, State: clock.Stopped}, ev.Clock.Observed)
	exec(t, c, "START AT NOW;")
	ev = e.event(c, "prod", follow.EventState)
	require.Equal(t, clock.Paced, ev.Clock.Observed.State)
	require.Equal(t, uint64(2), ev.Clock.Observed.Generation)
	ev = e.event(c, "prod", follow.EventTick)
	require.Equal(t, uint64(2), ev.Clock.Tick.Generation)
	require.Equal(t, uint64(1), ev.Clock.Tick.ID, "ids restart with the generation")

	// The domain ticks and stops after the detach reply; the next event is
	// the other domain's, and nothing else is unread.
	exec(t, c, "DETACH DOMAIN CLOCK;")
	require.Empty(t, c.Followed())
	e.accept(time.Second)
	e.waitAccepted("prod", 2, 2)
	exec(t, c, "STOP; USE other; ATTACH DOMAIN CLOCK; START;")
	ev = e.event(c, "other", follow.EventState)
	require.Equal(t, clock.Unpaced, ev.Clock.Observed.State)
	require.Zero(t, c.Pending())

	// A dropped domain ends the attachment with DomainRemoved, last: the
	// other domain's next event follows it.
	exec(t, c, "USE prod; ATTACH DOMAIN CLOCK; DROP DOMAIN prod;")
	ev = e.event(c, "prod", follow.EventEnd)
	require.Equal(t, wire.DomainRemoved, ev.Reason)
	require.Equal(t, []string{"other"}, c.Followed())
	exec(t, c, "USE other; STOP;")
	ev = e.event(c, "other", follow.EventState)
	require.Equal(t, clock.Stopped, ev.Clock.Observed.State)
	require.Zero(t, c.Pending())
}

func TestCancelledStatement(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.ExecText(ctx, "LIST DOMAINS;")
	require.ErrorIs(t, err, context.Canceled)
	exec(t, c, "LIST DOMAINS;")
}

func TestClosedClient(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	require.NoError(t, c.Close())
	_, err := c.ExecText(ctxT(t), "LIST DOMAINS;")
	require.ErrorIs(t, err, ErrClosed)
	_, err = c.NextEvent(ctxT(t))
	require.ErrorIs(t, err, ErrClosed)
	require.True(t, errors.Is(err, ErrClosed))
}

type tlsConfig = tls.Config
