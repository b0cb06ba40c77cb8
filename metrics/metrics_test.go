package metrics_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gometrics "github.com/armon/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/metrics"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) (int, string, http.Header) {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, err := io.ReadAll(w.Result().Body)
	require.NoError(t, err)
	return w.Code, string(b), w.Result().Header
}

func TestHandlerRoutes(t *testing.T) {
	reg := metrics.NewRegistry()
	notReady := errors.New("no consensus leader is known")
	tests := []struct {
		name     string
		ready    error
		method   string
		path     string
		wantCode int
		wantBody string
	}{
		{"metrics", nil, http.MethodGet, "/metrics", http.StatusOK, "# TYPE go_goroutines gauge"},
		{"process", nil, http.MethodGet, "/metrics", http.StatusOK, "# TYPE process_resident_memory_bytes gauge"},
		{"build info", nil, http.MethodGet, "/metrics", http.StatusOK, "# TYPE go_build_info gauge"},
		{"livez", notReady, http.MethodGet, "/livez", http.StatusOK, "ok\n"},
		{"readyz ready", nil, http.MethodGet, "/readyz", http.StatusOK, "ok\n"},
		{"readyz not ready", notReady, http.MethodGet, "/readyz", http.StatusServiceUnavailable, "not ready: no consensus leader is known\n"},
		{"unknown path", nil, http.MethodGet, "/v1/session", http.StatusNotFound, ""},
		{"post", nil, http.MethodPost, "/metrics", http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := metrics.Handler(reg, func() error { return tt.ready })
			code, body, _ := get(t, h, tt.method, tt.path)
			require.Equal(t, tt.wantCode, code, body)
			require.Contains(t, body, tt.wantBody)
		})
	}
}

func TestHandlerNegotiatesOpenMetrics(t *testing.T) {
	h := metrics.Handler(metrics.NewRegistry(), func() error { return nil })
	_, body, hdr := get(t, h, http.MethodGet, "/metrics", "Accept", "application/openmetrics-text; version=1.0.0")
	require.Contains(t, hdr.Get("Content-Type"), "application/openmetrics-text")
	require.True(t, strings.HasSuffix(body, "# EOF\n"), "an OpenMetrics exposition ends with # EOF")
}

// TestRaftTelemetryReachesEveryRegistry: what raft reports through the
// go-metrics global reaches every registry NewRegistry built, and no
// registry's own collectors reach another's.
func TestRaftTelemetryReachesEveryRegistry(t *testing.T) {
	a, b := metrics.NewRegistry(), metrics.NewRegistry()
	a.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "only_in_a_total", Help: "A."}))
	gometrics.IncrCounter([]string{"raft", "test", "bridged"}, 2)
	gometrics.SetGaugeWithLabels([]string{"raft", "test", "peer"}, 1, []gometrics.Label{{Name: "peer_id", Value: "n2"}})
	for _, tt := range []struct {
		name   string
		reg    *prometheus.Registry
		wantA  bool
		series []string
	}{
		{"a", a, true, []string{"raft_test_bridged 2", `raft_test_peer{peer_id="n2"} 1`}},
		{"b", b, false, []string{"raft_test_bridged 2", `raft_test_peer{peer_id="n2"} 1`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, body, _ := get(t, metrics.Handler(tt.reg, func() error { return nil }), http.MethodGet, "/metrics")
			for _, s := range tt.series {
				require.Contains(t, body, "\n"+s+"\n")
			}
			require.Equal(t, tt.wantA, strings.Contains(body, "only_in_a_total"))
		})
	}
}

// TestStartingHandsOver: while the node starts, /livez passes and /readyz
// and /metrics answer 503; after Serve, the node's handler answers all.
func TestStartingHandsOver(t *testing.T) {
	var s metrics.Starting
	for _, tt := range []struct {
		path     string
		wantCode int
	}{
		{"/livez", http.StatusOK},
		{"/readyz", http.StatusServiceUnavailable},
		{"/metrics", http.StatusServiceUnavailable},
		{"/other", http.StatusNotFound},
	} {
		code, body, _ := get(t, &s, http.MethodGet, tt.path)
		require.Equal(t, tt.wantCode, code, "%s while starting: %s", tt.path, body)
	}
	s.Serve(metrics.Handler(metrics.NewRegistry(), func() error { return nil }))
	for _, path := range []string{"/livez", "/readyz", "/metrics"} {
		code, body, _ := get(t, &s, http.MethodGet, path)
		require.Equal(t, http.StatusOK, code, "%s once started: %s", path, body)
	}
}
