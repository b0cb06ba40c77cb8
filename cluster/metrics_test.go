package cluster_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/internal/testcluster"
)

// scrape GETs url+path and returns its status code and body.
func scrape(t *testing.T, url, path string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// families returns the metric families a text exposition declares.
func families(body string) map[string]bool {
	out := make(map[string]bool)
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) `).FindAllStringSubmatch(body, -1) {
		out[m[1]] = true
	}
	return out
}

// sample returns the value of the sample written exactly as series, and
// whether there is one.
func sample(t *testing.T, body, series string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f, true
		}
	}
	return 0, false
}

// TestMetricsListenerOfThreeNodes scrapes every member's metrics listener
// of a three-node cluster with a session server and a paced domain: each
// shows the Go, process and build series, raft's apply and commit series,
// the interconnect series and every nspl_* family, and the per-domain
// authority gauge of one member's registry is its own.
func TestMetricsListenerOfThreeNodes(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	members := h.StartThree()
	urls := make([]string, len(members))
	for i, m := range members {
		h.ServeSessions(m)
		urls[i] = h.ServeMetrics(m)
	}
	d := startPaced(t, h.Leader(), "scraped", 20*time.Millisecond)
	h.Eventually(10*time.Second, "ticks of the authority on every member", func() bool {
		for _, m := range members {
			if _, ok := tickedBy(m, "scraped", d.Authority); !ok {
				return false
			}
		}
		return true
	})

	want := []string{
		"go_goroutines", "process_resident_memory_bytes", "go_build_info",
		"raft_apply", "raft_commitTime",
		"nspl_interconnect_requests_total", "nspl_interconnect_request_duration_seconds",
		"nspl_domain_authority", "nspl_domain_tick_lag_seconds",
		// The nspl_* families of the hand-written /metrics, names kept.
		"nspl_sessions", "nspl_sessions_opened_total", "nspl_clock_attachments",
		"nspl_session_refusals_total", "nspl_sessions_closed_total", "nspl_connections_unserved_total",
		"nspl_ticks_produced_total", "nspl_progress_sent_total", "nspl_progress_send_failures_total",
		"nspl_peer_requests_forbidden_total", "nspl_progress_received_total", "nspl_commit_latency_seconds",
		"nspl_statements_total",
	}
	held := 0.0
	for i, url := range urls {
		var body string
		h.Eventually(10*time.Second, "every family on "+members[i].Node().Name(), func() bool {
			code, b := scrape(t, url, "/metrics")
			require.Equal(t, http.StatusOK, code, b)
			body = b
			fams := families(b)
			for _, f := range want {
				if !fams[f] {
					return false
				}
			}
			return true
		})
		v, ok := sample(t, body, `nspl_domain_authority{domain="scraped"}`)
		require.True(t, ok, "the authority gauge of %s", members[i].Node().Name())
		if members[i].Node().Name() == d.Authority.Node {
			require.Equal(t, 1.0, v, "the authority's own registry says it holds the domain")
		}
		held += v
		_, ok = sample(t, body, `nspl_interconnect_requests_total{code="200",route="status"}`)
		require.True(t, ok, "the availability probes are counted on %s", members[i].Node().Name())
		code, b := scrape(t, url, "/livez")
		require.Equal(t, http.StatusOK, code, b)
		// A loaded machine can delay a member's heartbeats past its
		// authority lease, which makes it unready for a moment, as it
		// should: ready is where it comes back to.
		h.Eventually(10*time.Second, "/readyz of "+members[i].Node().Name(), func() bool {
			code, _ := scrape(t, url, "/readyz")
			return code == http.StatusOK
		})
	}
	require.Equal(t, 1.0, held, "exactly one member's registry holds the authority: registries are per node")
}

// TestReadyzFollowsQuorum: /readyz of a member fails once the other two
// are gone (no leader can be known) while /livez still passes, and passes
// again once one of them is back.
func TestReadyzFollowsQuorum(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{Durable: true})
	h.StartThree()
	url := h.ServeMetrics(h.Member("n1"))
	code, body := scrape(t, url, "/readyz")
	require.Equal(t, http.StatusOK, code, body)

	h.Kill("n2")
	h.Kill("n3")
	h.Eventually(20*time.Second, "n1 not ready without a quorum", func() bool {
		code, body = scrape(t, url, "/readyz")
		return code == http.StatusServiceUnavailable
	})
	require.Contains(t, body, "no consensus leader is known")
	code, body = scrape(t, url, "/livez")
	require.Equal(t, http.StatusOK, code, body)

	h.Start("n2", false) // returns once its registration committed: a quorum again
	h.Eventually(20*time.Second, "n1 ready with its quorum back", func() bool {
		code, body = scrape(t, url, "/readyz")
		return code == http.StatusOK
	})
}
