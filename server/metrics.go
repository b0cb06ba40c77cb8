package server

import (
	"errors"
	"net/http"

	"github.com/nspl-dev/nspl/internal/guesslimit"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serverCollector exports the server's families (sessions, attachments
// and what the bounds refused) into its node's registry.
type serverCollector struct{ s *Server }

var (
	sessionsDesc       = prometheus.NewDesc("nspl_sessions", "Client sessions open on this node.", nil, nil)
	sessionsOpenedDesc = prometheus.NewDesc("nspl_sessions_opened_total", "Client sessions opened on this node.", nil, nil)
	attachmentsDesc    = prometheus.NewDesc("nspl_clock_attachments", "Domain clock attachments the open sessions hold.", nil, nil)
	refusalsDesc       = prometheus.NewDesc("nspl_session_refusals_total",
		"Sessions refused at admission: the node's session cap (capacity) or the identity's share (identity).", []string{"reason"}, nil)
	closedDesc = prometheus.NewDesc("nspl_sessions_closed_total",
		"Sessions the server closed with an error: idle too long, a message too slow or too large, a request id out of order, or a malformed message.", []string{"reason"}, nil)
	guessesWrongDesc = prometheus.NewDesc("nspl_token_guesses_wrong_total",
		"Wrong bearer tokens compared, over every route that takes the token and the console's login.", nil, nil)
	guessesRefusedDesc = prometheus.NewDesc("nspl_token_guesses_refused_total",
		"Bearer tokens refused uncompared with 429: the address prefix's limit (address) or the global ceiling (global).", []string{"scope"}, nil)
	statementsDesc = prometheus.NewDesc("nspl_statements_total",
		"Statements this node answered for its clients: over the session protocol with a reply (ok) or an error (error), a statement refused before it ran (syntax, a bad archive) included, and those the web console ran, its statement box and its buttons, whatever their outcome (console).", []string{"outcome"}, nil)
	unservedDesc = prometheus.NewDesc("nspl_connections_unserved_total",
		"Connections closed before serving a request: during the TLS handshake (failed or timed out), or after it without a request (header or idle timeout, or the client left).", []string{"stage"}, nil)
)

// Describe describes the server's families.
func (c serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sessionsDesc, sessionsOpenedDesc, attachmentsDesc, refusalsDesc, closedDesc, statementsDesc, unservedDesc, guessesWrongDesc, guessesRefusedDesc} {
		ch <- d
	}
}

// Collect reads the server's counters.
func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v uint64, label string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), label)
	}
	gauge(sessionsDesc, float64(s.Sessions()))
	ch <- prometheus.MustNewConstMetric(sessionsOpenedDesc, prometheus.CounterValue, float64(s.sessionsTotal.Load()))
	gauge(attachmentsDesc, float64(s.Attachments()))
	counter(refusalsDesc, s.admission.refusedCapacity.Load(), refuseCapacity)
	counter(refusalsDesc, s.admission.refusedIdentity.Load(), refuseIdentity)
	counter(closedDesc, s.closes.idle.Load(), "session_idle")
	counter(closedDesc, s.closes.message.Load(), "message_timeout")
	counter(closedDesc, s.closes.tooLarge.Load(), "message_too_large")
	counter(closedDesc, s.closes.order.Load(), "request_order")
	counter(closedDesc, s.closes.protocol.Load(), "protocol")
	counter(statementsDesc, s.statements.ok.Load(), "ok")
	counter(statementsDesc, s.statements.failed.Load(), "error")
	var consoleStatements uint64
	if c := s.console.Load(); c != nil {
		consoleStatements = c.Statements()
	}
	counter(statementsDesc, consoleStatements, "console")
	counter(unservedDesc, s.conns.unservedHandshake.Load(), "handshake")
	counter(unservedDesc, s.conns.unservedRequest.Load(), "request")
	var g guesslimit.Counts
	if s.guesses != nil {
		g = s.guesses.Counts()
	}
	ch <- prometheus.MustNewConstMetric(guessesWrongDesc, prometheus.CounterValue, float64(g.Wrong))
	counter(guessesRefusedDesc, g.RefusedAddress, guesslimit.ScopeAddress)
	counter(guessesRefusedDesc, g.RefusedGlobal, guesslimit.ScopeGlobal)
}

// registerMetrics adds the server's collector to its node's registry. A
// node serves one API listener; should a second server be built for the
// same node while the first is open, the first keeps reporting and the
// second's families are not exported (logged once).
func (s *Server) registerMetrics() {
	err := s.cfg.Node.MetricsRegistry().Register(s.collector)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		s.registered = true
	case errors.As(err, &are):
		s.logger.Warn("another session server of this node reports its session metrics; this one's are not exported")
	default:
		s.logger.Error("register the session server's metrics", "err", err)
	}
}

// unregisterMetrics removes the server's collector at Close, once.
func (s *Server) unregisterMetrics() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.registered {
		s.cfg.Node.MetricsRegistry().Unregister(s.collector)
		s.registered = false
	}
}

// metricsHandler serves the node's registry on the API listener's
// /metrics (behind authentication), in the Prometheus text or OpenMetrics
// format as the scraper asks.
func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.cfg.Node.MetricsRegistry(), promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		EnableOpenMetrics:   true,
	})
}
