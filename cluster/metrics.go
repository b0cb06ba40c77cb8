package cluster

import (
	"net/http"
	"strconv"

	"github.com/nspl-dev/nspl/interconnect"

	"github.com/prometheus/client_golang/prometheus"
)

// memberMetrics are the member's series in its node's registry
// (node.Node.MetricsRegistry): the counters of Metrics, exported under the
// nspl_* names /metrics has always had, and the interconnect's request and
// latency series, observed as the peer handler serves.
type memberMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// peerRoutes are the route labels of the interconnect series: the peer
// handler's paths; any other path is "other", so a caller cannot grow the
// label set.
var peerRoutes = map[string]string{
	interconnect.PathProgress:  "progress",
	interconnect.PathJoin:      "join",
	interconnect.PathPropose:   "propose",
	interconnect.PathStatus:    "status",
	interconnect.PathRemove:    "remove",
	interconnect.PathInstalled: "installed",
	// A stream is counted when it ends; it has no latency to observe.
	interconnect.PathInstalledStream: "installed_stream",
}

func newMemberMetrics() *memberMetrics {
	buckets := make([]float64, len(commitBounds))
	for i, b := range commitBounds {
		buckets[i] = b.Seconds()
	}
	return &memberMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nspl_interconnect_requests_total",
			Help: "Interconnect requests this node served, by route and HTTP status code (403: refused because of who sent them).",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "nspl_interconnect_request_duration_seconds",
			Help:    "Time this node took to serve an interconnect request, by route.",
			Buckets: buckets,
		}, []string{"route"}),
	}
}

// registerMetrics adds the member's collectors to reg.
func (m *Member) registerMetrics(reg prometheus.Registerer) {
	reg.MustRegister(m.mm.requests, m.mm.latency, memberCollector{m})
}

// instrument wraps the peer handler so that every request it serves is
// counted by route and status and its latency observed on the member's
// monotonic clock.
func (m *Member) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, ok := peerRoutes[r.URL.Path]
		if !ok {
			route = "other"
		}
		start := m.src.Monotonic()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		if r.URL.Path != interconnect.PathInstalledStream {
			m.mm.latency.WithLabelValues(route).Observe((m.src.Monotonic() - start).Seconds())
		}
		m.mm.requests.WithLabelValues(route, strconv.Itoa(rec.code)).Inc()
	})
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.code, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

// Flush passes a flush on, for handlers that stream.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// memberCollector exports Metrics.
type memberCollector struct{ m *Member }

var (
	ticksProducedDesc = prometheus.NewDesc("nspl_ticks_produced_total", "Ticks this node's clock authorities produced.", nil, nil)
	progressSentDesc  = prometheus.NewDesc("nspl_progress_sent_total", "Progress requests this node delivered to peers that replied.", nil, nil)
	progressFailDesc  = prometheus.NewDesc("nspl_progress_send_failures_total", "Progress requests to peers that failed.", nil, nil)
	forbiddenDesc     = prometheus.NewDesc("nspl_peer_requests_forbidden_total", "Interconnect requests refused because of who sent them.", nil, nil)
	receivedDesc      = prometheus.NewDesc("nspl_progress_received_total", "Progress reports this node received, by how it evaluated them.", []string{"outcome"}, nil)
	commitLatencyDesc = prometheus.NewDesc("nspl_commit_latency_seconds", "Latency of catalog commands this node committed, locally or through the leader.", nil, nil)
)

// Describe describes the member's counters.
func (c memberCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ticksProducedDesc, progressSentDesc, progressFailDesc, forbiddenDesc, receivedDesc, commitLatencyDesc} {
		ch <- d
	}
}

// Collect reads the member's counters once.
func (c memberCollector) Collect(ch chan<- prometheus.Metric) {
	mt := c.m.Metrics()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(ticksProducedDesc, mt.TicksProduced)
	counter(progressSentDesc, mt.ProgressSent)
	counter(progressFailDesc, mt.ProgressFailed)
	counter(forbiddenDesc, mt.PeerForbidden)
	counter(receivedDesc, mt.ProgressAccepted, "accepted")
	counter(receivedDesc, mt.ProgressIgnored, "ignored")
	counter(receivedDesc, mt.ProgressRefused, "refused")
	counter(receivedDesc, mt.ProgressImplausible, "implausible")
	h := mt.CommitLatency
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		buckets[b.Seconds()] = h.Counts[i]
	}
	ch <- prometheus.MustNewConstHistogram(commitLatencyDesc, h.Count, h.Sum.Seconds(), buckets)
}
