package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/serve"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

// wait bounds every wait on the cluster.
const wait = 20 * time.Second

// get sends a GET to url with hc and returns the status and body.
func get(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// clientOf returns an HTTPS client presenting client name's certificate of
// h's CA.
func clientOf(t *testing.T, h *testcluster.Cluster, name string) *http.Client {
	tr := &http.Transport{TLSClientConfig: h.ClientTLS(name), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// refused reports whether nothing accepts connections on addr.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	_ = c.Close()
	return false
}

// TestStartingProcessServesPeersAndAsksClientsToRetry holds the API
// listener of a process whose member is still opening (it cannot join, so
// it opens until its start is cancelled): the listener serves from the
// start, the member's peer handler answers the peers itself, a client's
// routes answer 503 with Retry-After, and a start that ends in failure
// leaves nothing listening.
func TestStartingProcessServesPeersAndAsksClientsToRetry(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	h.Start("n1", true)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close()) // nothing answers a join there

	cfg := h.Config("n2", false, deadAddr)
	startCtx, stopStart := context.WithCancel(context.Background())
	defer stopStart()
	started := make(chan error, 1)
	go func() {
		_, err := h.StartContext(startCtx, cfg)
		started <- err
	}()

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	tr := h.Material("n1").Transport()
	t.Cleanup(tr.CloseIdleConnections)
	_, err = interconnect.NewClient(tr).Status(ctx, cfg.APIAddr)
	require.ErrorContains(t, err, cluster.ErrNotReady.Error(), "the peer handler answers for the starting member")

	hc := clientOf(t, h, "operator")
	for _, path := range []string{wire.HealthPath, wire.SessionPath, wire.MetricsPath} {
		resp, err := hc.Get("https://" + cfg.APIAddr + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s while the node starts", path)
		require.Equal(t, "1", resp.Header.Get("Retry-After"), path)
		require.Contains(t, string(body), "node n2 is still starting", path)
	}

	stopStart()
	require.Error(t, <-started, "a member that cannot join does not start")
	require.True(t, refused(cfg.APIAddr), "a process that did not start still listens on %s", cfg.APIAddr)
}

// TestProcessServesTheMemberOnOneListener holds the production wiring of a
// started process: its one API listener serves the session routes to a
// client certificate (/healthz), the member's SHOW CLUSTER STATUS view
// through the server, and the peer interconnect to a node certificate;
// a LEAVE sent to it runs Config.Left once the member has left; Close
// stops listening.
func TestProcessServesTheMemberOnOneListener(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	n1 := h.Start("n1", true)
	cfg := h.Config("n2", false, n1.APIAddr())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.APIAddr = "" // the listener's
	left := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	p, err := serve.Start(ctx, serve.Config{Member: cfg, Listener: ln, Left: func() { close(left) }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	addr := ln.Addr().String()
	require.Equal(t, addr, p.Member().APIAddr(), "APIAddr defaults to the listener's")

	hc := clientOf(t, h, "operator")
	status, body := get(t, hc, "https://"+addr+wire.HealthPath)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "ok\n", body)

	tr := h.Material("n1").Transport()
	t.Cleanup(tr.CloseIdleConnections)
	st, err := interconnect.NewClient(tr).Status(ctx, addr)
	require.NoError(t, err, "the peer interconnect on the API listener")
	require.Equal(t, "n2", st.Node)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+wire.LeavePath, strings.NewReader("{}"))
	require.NoError(t, err)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	reply, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", reply)
	select {
	case <-left:
	case <-ctx.Done():
		t.Fatal("Config.Left did not run after the leave")
	}
	require.NoError(t, p.Close())
	require.True(t, refused(addr), "a closed process still listens")
}

// TestInsecureProcessIsALoneNode holds an insecure process: one node with
// no peers on plain HTTP over loopback, refused on any other address.
func TestInsecureProcessIsALoneNode(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	p, err := serve.Start(ctx, serve.Config{Member: cluster.Config{Node: "solo"}, Insecure: true, Listener: ln})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	require.Nil(t, p.Member(), "a lone node is no cluster member")
	status, body := get(t, http.DefaultClient, "http://"+ln.Addr().String()+wire.HealthPath)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "ok\n", body)
	require.NoError(t, p.Close())

	wide, err := net.Listen("tcp", ":0")
	require.NoError(t, err)
	_, err = serve.Start(ctx, serve.Config{Member: cluster.Config{Node: "solo"}, Insecure: true, Listener: wide})
	require.ErrorIs(t, err, serve.ErrConfig)
	require.ErrorIs(t, err, wire.ErrInsecureAddress)
	_, port, err := net.SplitHostPort(wide.Addr().String())
	require.NoError(t, err)
	require.True(t, refused("127.0.0.1:"+port), "a refused process still listens")
}

// TestProcessOwnsItsServerWiring holds that what the process wires itself
// cannot come in through Config.Server, that a server configuration the
// server refuses stops the start, and that either refusal closes the
// listeners the process was handed.
func TestProcessOwnsItsServerWiring(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   server.Config
		err  error
	}{
		{"peer", server.Config{Peer: http.NotFoundHandler()}, serve.ErrConfig},
		{"insecure", server.Config{Insecure: true}, serve.ErrConfig},
		{"opened", server.Config{Opened: make(chan struct{})}, serve.ErrConfig},
		{"allowed host the server refuses", server.Config{AllowedHosts: []string{"not a host"}}, server.ErrConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			mln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			_, err = serve.Start(context.Background(), serve.Config{Member: cluster.Config{Node: "solo"}, Insecure: true,
				Listener: ln, MetricsListener: mln, Server: tc.sc})
			require.ErrorIs(t, err, tc.err)
			require.True(t, refused(ln.Addr().String()), "the API listener is closed")
			require.True(t, refused(mln.Addr().String()), "the metrics listener is closed")
		})
	}
}
