package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestServeMetricsAddrFlag(t *testing.T) {
	base := []string{"serve", "--node", "n1", "--api-addr", "127.0.0.1:1", "--insecure"}
	for _, tt := range []struct {
		name    string
		args    []string
		want    string
		wantErr string
	}{
		{"default: loopback, a free port", nil, "127.0.0.1:0", ""},
		{"a fixed address", []string{"--metrics-addr", "127.0.0.1:9464"}, "127.0.0.1:9464", ""},
		{"empty: no listener", []string{"--metrics-addr", ""}, "", ""},
		{"no port", []string{"--metrics-addr", "127.0.0.1"}, "", "give HOST:PORT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(append(append([]string(nil), base...), tt.args...))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrUsage)
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, o.serve.metricsAddr)
		})
	}
}

// lockedBuilder is a strings.Builder safe for a writer and a reader on
// different goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeMetricsListener runs nspl serve with the default --metrics-addr
// and scrapes the plain-HTTP listener it prints, once /readyz passes: /metrics carries the
// node's and the session server's series without any credential, /livez
// and /readyz pass, and the listener closes with the process.
func TestServeMetricsListener(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout lockedBuilder
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "--node", "solo", "--api-addr", "127.0.0.1:0", "--insecure", "--drain-timeout", "0s"},
			strings.NewReader(""), &stdout, io.Discard)
	}()
	addr := regexp.MustCompile(`metrics on (http://127\.0\.0\.1:\d+)/metrics\n`)
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == ""; time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
		}
		require.True(t, time.Now().Before(deadline), "nspl serve printed no metrics address: %q", stdout.String())
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	// The listener answers from the start; /readyz passes once the node
	// has started.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, err := hc.Get(url + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.True(t, time.Now().Before(deadline), "nspl serve's node never became ready")
	}
	for _, tt := range []struct {
		path string
		want []string
	}{
		{"/metrics", []string{"\nnspl_sessions 0\n", "# TYPE go_goroutines gauge", "# TYPE process_resident_memory_bytes gauge", "# TYPE raft_commitTime summary"}},
		{"/livez", []string{"ok\n"}},
		{"/readyz", []string{"ok\n"}},
	} {
		resp, err := hc.Get(url + tt.path)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, tt.path)
		for _, w := range tt.want {
			require.Contains(t, string(b), w, tt.path)
		}
	}
	// A rebinding name reaching the loopback listener is misdirected.
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := hc.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	require.NotContains(t, string(b), "nspl_sessions")
	require.Contains(t, string(b), "--allowed-host")
	cancel()
	require.NoError(t, <-done)
	_, err = hc.Get(url + "/livez")
	require.Error(t, err, "the metrics listener closes with nspl serve")
}
