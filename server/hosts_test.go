package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

// getWithHost sends GET url+path with the Host header host and returns
// the status and body.
func getWithHost(t *testing.T, hc *http.Client, url, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+path, nil)
	require.NoError(t, err)
	req.Host = host
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestForeignHostIsMisdirected: an insecure (loopback) listener answers
// every route, the console's included, only under a loopback Host or a
// configured name; a rebinding name gets 421 and a body saying how to
// reach the node. Before the check, such a request read the console's CSRF
// token and ran statements.
func TestForeignHostIsMisdirected(t *testing.T) {
	url, _ := insecureEnv(t, Config{Console: true, AllowedHosts: []string{"nspl.example.com"}})
	port := url[strings.LastIndexByte(url, ':')+1:]
	hc := h2c()
	defer hc.CloseIdleConnections()
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"127.9.8.7:" + port, http.StatusOK},
		{"nspl.example.com:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"evil.example", http.StatusMisdirectedRequest},
		{"nspl.example.com.evil.example:" + port, http.StatusMisdirectedRequest},
		{"128.0.0.1:" + port, http.StatusMisdirectedRequest},
	} {
		for _, path := range []string{wire.HealthPath, wire.MetricsPath, "/console/api/whoami"} {
			t.Run(tc.host+path, func(t *testing.T) {
				status, body := getWithHost(t, hc, url, path, tc.host)
				require.Equal(t, tc.want, status, body)
				if tc.want == http.StatusMisdirectedRequest {
					require.Contains(t, body, "--allowed-host")
					require.Contains(t, body, "127.0.0.1")
					require.NotContains(t, body, "csrf")
				}
			})
		}
	}
}

// TestNewRefusesMalformedAllowedHosts: a configured name is a bare host.
func TestNewRefusesMalformedAllowedHosts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	defer n.Close()
	for _, names := range [][]string{{""}, {"nspl.example.com:8001"}, {"http://nspl.example.com"}, {"ok.example", "a b"}} {
		_, err := New(Config{Node: n, Insecure: true, AllowedHosts: names})
		require.ErrorIs(t, err, ErrConfig, "%q", names)
		require.ErrorIs(t, err, wire.ErrAllowedHost, "%q", names)
	}
	srv, err := New(Config{Node: n, Insecure: true, AllowedHosts: []string{"nspl.example.com", "10.0.0.5", "[fd00::1]"}})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
}

// reportedAddrListener serves a loopback listener but reports another
// address, as a listener bound to a non-loopback interface would.
type reportedAddrListener struct {
	net.Listener
	addr net.Addr
}

func (l reportedAddrListener) Addr() net.Addr { return l.addr }

// TestTLSHostCheckFollowsTheBoundAddress: a TLS listener on loopback
// checks the Host as a plain one does; a TLS listener bound elsewhere
// answers its real names, whatever they are, since a rebinding name cannot
// present the node's certificate. Either way the names of the node's
// certificate are answered.
func TestTLSHostCheckFollowsTheBoundAddress(t *testing.T) {
	ca := testpki.New(t)
	for _, tc := range []struct {
		name    string
		report  net.Addr // nil: the listener's own loopback address
		foreign int
	}{
		{"bound to loopback", nil, http.StatusMisdirectedRequest},
		{"bound elsewhere", &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8001}, http.StatusOK},
		{"bound to every interface", &net.TCPAddr{IP: net.IPv4zero, Port: 8001}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, n.Close()) })
			srv, err := New(Config{Node: n, Logger: quietLogger(), TLS: ca.Node("n1").ServerConfig(pki.ServerOptions{AllowNoClientCert: true})})
			require.NoError(t, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			url := "https://" + ln.Addr().String()
			var served net.Listener = ln
			if tc.report != nil {
				served = reportedAddrListener{ln, tc.report}
			}
			testserve.Serve(t, served, srv.Serve, srv.Close)
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: (&pki.Material{Pool: mustPool(t, ca)}).ClientConfig("", ""), ForceAttemptHTTP2: true}}
			defer hc.CloseIdleConnections()
			status, body := getWithHost(t, hc, url, wire.HealthPath, "nspl.example.com:8001")
			require.Equal(t, tc.foreign, status, body)
			status, body = getWithHost(t, hc, url, wire.HealthPath, ln.Addr().String())
			require.Equal(t, http.StatusOK, status, body)
			status, body = getWithHost(t, hc, url, wire.HealthPath, "n1:8001")
			require.Equal(t, http.StatusOK, status, "a name of the node's certificate: %s", body)
		})
	}
}

// TestGuardLoopbackHosts: the metrics listener's check applies to what
// arrives over loopback, so a wildcard-bound listener is checked on its
// loopback side and answers scrapers on other interfaces as before.
func TestGuardLoopbackHosts(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "metrics") })
	h := GuardLoopbackHosts(ok, []string{"scrape.example"})
	for _, tc := range []struct {
		name, local, host string
		want              int
	}{
		{"loopback, loopback host", "127.0.0.1:9464", "127.0.0.1:9464", http.StatusOK},
		{"loopback, configured name", "127.0.0.1:9464", "scrape.example:9464", http.StatusOK},
		{"loopback, rebinding name", "127.0.0.1:9464", "evil.example:9464", http.StatusMisdirectedRequest},
		{"IPv6 loopback, rebinding name", "[::1]:9464", "evil.example:9464", http.StatusMisdirectedRequest},
		{"another interface, any name", "192.0.2.10:9464", "evil.example:9464", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tc.local)
			require.NoError(t, err)
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			r.Host = tc.host
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, tc.want, w.Code, w.Body.String())
		})
	}

	// Over a real loopback connection.
	ts := httptest.NewServer(h)
	defer ts.Close()
	status, _ := getWithHost(t, ts.Client(), ts.URL, "/metrics", "evil.example")
	require.Equal(t, http.StatusMisdirectedRequest, status)
	status, body := getWithHost(t, ts.Client(), ts.URL, "/metrics", strings.TrimPrefix(ts.URL, "http://"))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "metrics", body)
}
