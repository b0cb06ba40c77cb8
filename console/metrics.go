package console

import (
	"net/http"
	"sort"
	"strconv"
)

// The cluster page's live charts read the serving node's metrics registry
// (Config.Metrics) through api/metrics, which answers only the callers
// every other console route answers, and only the console's own pages: a
// sample of the few series the charts draw, which the page reads once a
// second and turns into rates.

// The series the charts draw.
const (
	metricStatements    = "nspl_statements_total"
	metricCommitLatency = "nspl_commit_latency_seconds"
	metricTickLag       = "nspl_domain_tick_lag_seconds"
)

// maxChartedDomains bounds the domains whose tick lag a sample carries:
// those with the largest lag.
const maxChartedDomains = 8

// metricsSample is one reading of the charts' series. A series the
// registry does not hold is absent (null): the chart says it has no data.
type metricsSample struct {
	// UTC is the node's UTC of the reading, in Unix nanoseconds.
	UTC string `json:"utc_ns"`
	// Statements is nspl_statements_total: statements the node ran for
	// its clients.
	Statements *float64 `json:"statements_total"`
	// Commit is nspl_commit_latency_seconds's count and sum.
	Commit *commitSample `json:"commit"`
	// TickLag is nspl_domain_tick_lag_seconds of each running paced
	// domain, the largest first, at most maxChartedDomains.
	TickLag []domainLag `json:"tick_lag"`
	// More counts the domains left out of TickLag.
	More int `json:"more,omitempty"`
}

type commitSample struct {
	Count      uint64  `json:"count"`
	SumSeconds float64 `json:"sum_seconds"`
}

type domainLag struct {
	Domain  string  `json:"domain"`
	Seconds float64 `json:"seconds"`
}

// serveMetrics answers one metricsSample of the node's registry.
func (c *Console) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if c.cfg.Metrics == nil {
		http.Error(w, "this console has no metrics registry to chart", http.StatusNotFound)
		return
	}
	fams, err := c.cfg.Metrics.Gather()
	if err != nil && len(fams) == 0 {
		c.logger.Warn("console: gather the node's metrics", "err", err)
		http.Error(w, "the node's metrics could not be read: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s := metricsSample{UTC: strconv.FormatInt(c.now(), 10), TickLag: []domainLag{}}
	for _, f := range fams {
		switch f.GetName() {
		case metricStatements:
			var total float64
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
			s.Statements = &total
		case metricCommitLatency:
			var cs commitSample
			for _, m := range f.GetMetric() {
				cs.Count += m.GetHistogram().GetSampleCount()
				cs.SumSeconds += m.GetHistogram().GetSampleSum()
			}
			s.Commit = &cs
		case metricTickLag:
			for _, m := range f.GetMetric() {
				var domain string
				for _, l := range m.GetLabel() {
					if l.GetName() == "domain" {
						domain = l.GetValue()
					}
				}
				s.TickLag = append(s.TickLag, domainLag{Domain: domain, Seconds: m.GetGauge().GetValue()})
			}
		}
	}
	sort.Slice(s.TickLag, func(i, j int) bool {
		a, b := s.TickLag[i], s.TickLag[j]
		if a.Seconds != b.Seconds {
			return a.Seconds > b.Seconds
		}
		return a.Domain < b.Domain
	})
	if len(s.TickLag) > maxChartedDomains {
		s.More = len(s.TickLag) - maxChartedDomains
		s.TickLag = s.TickLag[:maxChartedDomains]
	}
	writeJSON(w, http.StatusOK, s)
}

// Statements returns how many statements the console ran for its
// callers: each statement of the statement box, and each of a button's.
// The session server adds it to its own count in nspl_statements_total.
func (c *Console) Statements() uint64 { return c.statements.Load() }
