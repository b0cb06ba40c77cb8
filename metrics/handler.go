package metrics

import (
	"log"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Paths the metrics listener serves.
const (
	MetricsPath = "/metrics"
	LivezPath   = "/livez"
	ReadyzPath  = "/readyz"
)

// maxScrapesInFlight caps concurrent /metrics requests; a scrape beyond it
// is answered 503 at once instead of queueing.
const maxScrapesInFlight = 4

// Limits of the metrics listener's HTTP server (NewHTTPServer).
const (
	HeaderTimeout  = 5 * time.Second
	ReadTimeout    = 10 * time.Second
	WriteTimeout   = 30 * time.Second
	IdleTimeout    = 60 * time.Second
	MaxHeaderBytes = 8 << 10
)

// Handler serves the metrics listener's routes:
//
//   - MetricsPath: g in the Prometheus text or OpenMetrics format, as the
//     scraper's Accept header asks; a collector's error leaves its series
//     out and the rest are served. At most maxScrapesInFlight at once.
//   - LivezPath: 200 while the process serves at all.
//   - ReadyzPath: 200 when ready returns nil, else 503 with its message.
//
// Anything else is 404; only GET and HEAD are served.
func Handler(g prometheus.Gatherer, ready func() error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+MetricsPath, promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapesInFlight,
		EnableOpenMetrics:   true,
	}))
	mux.HandleFunc("GET "+LivezPath, func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET "+ReadyzPath, func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
	return mux
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// NewHTTPServer returns the plain-HTTP server of the metrics listener for
// h, with the limits above; errLog receives its connection errors (nil
// means the log package's default).
func NewHTTPServer(h http.Handler, errLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: HeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          errLog,
	}
}

// Starting serves the metrics listener's routes while the node it will
// report on is still starting: /livez passes, /readyz and /metrics answer
// 503, until Serve hands it the node's handler; from then on every request
// goes to that handler. It lets the listener be bound and answer from the
// first moment of a start that may wait long for a quorum. It is safe for
// concurrent use.
type Starting struct {
	h atomic.Pointer[http.Handler]
}

// Serve makes s pass every request to h from now on.
func (s *Starting) Serve(h http.Handler) { s.h.Store(&h) }

// ServeHTTP serves r.
func (s *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := s.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case LivezPath:
		writeText(w, http.StatusOK, "ok")
	case ReadyzPath, MetricsPath:
		writeText(w, http.StatusServiceUnavailable, "not ready: the node is starting")
	default:
		http.NotFound(w, r)
	}
}
