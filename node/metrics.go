package node

import (
	"fmt"
	"net/http"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/metrics"

	"github.com/prometheus/client_golang/prometheus"
)

// MetricsRegistry returns the node's own Prometheus registry
// (metrics.NewRegistry): the node's domain gauges are in it, and the
// cluster member and session server around the node register theirs into
// it, so nodes sharing a process never mix their series. The registry is
// built on the first call, and every call returns the same one; it is safe
// for concurrent use.
func (n *Node) MetricsRegistry() *prometheus.Registry { return n.metrics() }

// MetricsHandler serves the node's registry on /metrics, /livez and
// /readyz (metrics.Handler), readiness being Ready.
func (n *Node) MetricsHandler() http.Handler { return metrics.Handler(n.metrics(), n.Ready) }

// Ready returns nil when the node can serve: it is open and not closed
// (its catalog is reachable), it knows a consensus leader, and it has
// installed the committed domains' clocks since it started, it vouches
// for its clocks (its authority lease holds; see Vouches), and no running
// paced domain is without an assigned clock authority. Otherwise it
// returns an error wrapping ErrNotReady that says which.
func (n *Node) Ready() error {
	if n.closed.Load() {
		return fmt.Errorf("%w: the node is closed", ErrNotReady)
	}
	if count, _, _ := n.Installed(); count == 0 {
		return fmt.Errorf("%w: the node has not installed the committed domains' clocks yet; wait for it to open", ErrNotReady)
	}
	if in := n.Interruption(); in != nil {
		return fmt.Errorf("%w: %s; its clocks are interrupted and its reads may be stale until it is back and caught up", ErrNotReady, in.Cause)
	}
	if _, ok := n.catalog.Leader(); !ok {
		return fmt.Errorf("%w: no consensus leader is known; check that a quorum of voters runs and reaches this node", ErrNotReady)
	}
	if count, first := n.uninstalled.first(); count > 0 {
		return fmt.Errorf("%w: %d running paced domain(s), '%s' first, have no clock authority assigned, so their clocks cannot be read or ticked here; SHOW CLUSTER STATUS shows them: a voter must be live to own each (join or restart one), or STOP them", ErrNotReady, count, first)
	}
	return nil
}

// domainCollector exports the node's per-domain gauges: which paced
// domains this node is the clock authority of, and how old the newest tick
// it holds of each running paced domain is.
type domainCollector struct{ n *Node }

var (
	domainAuthorityDesc = prometheus.NewDesc("nspl_domain_authority",
		"1 when this node's incarnation holds the committed clock authority of the running paced domain, else 0.",
		[]string{"domain"}, nil)
	domainTickLagDesc = prometheus.NewDesc("nspl_domain_tick_lag_seconds",
		"Seconds from the authority's UTC of the newest tick this node holds of the running paced domain to this node's UTC now; absent before the first tick.",
		[]string{"domain"}, nil)
	domainTickIntervalDesc = prometheus.NewDesc("nspl_domain_tick_interval_seconds",
		"Seconds of UTC between two ticks of the running paced domain: its PERIOD divided by its TIME RATE. nspl_domain_tick_lag_seconds grows to it between ticks.",
		[]string{"domain"}, nil)
	leaderDesc = prometheus.NewDesc("nspl_leader",
		"1 while this node is the consensus leader, else 0.", nil, nil)
	leaderKnownDesc = prometheus.NewDesc("nspl_leader_known",
		"1 while this node knows a consensus leader, else 0.", nil, nil)
	quorumDesc = prometheus.NewDesc("nspl_quorum",
		"1 while this node knows a consensus leader and is in contact with it within its authority lease, so a quorum of voters commits what it sends; else 0.", nil, nil)
	authorityUnassignedDesc = prometheus.NewDesc("nspl_domains_authority_unassigned",
		"Running paced domains whose committed clock has no clock authority assigned, as this node installed them; each keeps /readyz at 503.", nil, nil)
)

// Describe describes the node's gauges.
func (c domainCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{domainAuthorityDesc, domainTickLagDesc, domainTickIntervalDesc, leaderDesc, leaderKnownDesc, quorumDesc, authorityUnassignedDesc} {
		ch <- d
	}
}

// Collect reads the node's consensus view, the committed domains and the
// node's progress; before the node installed the domains it collects
// nothing.
func (c domainCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.n
	if count, _, _ := n.Installed(); count == 0 || n.closed.Load() {
		return
	}
	flag := func(d *prometheus.Desc, on bool) {
		v := 0.0
		if on {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	_, known := n.catalog.Leader()
	flag(leaderDesc, n.catalog.IsLeader())
	flag(leaderKnownDesc, known)
	flag(quorumDesc, known && n.Interruption() == nil)
	unassigned, _ := n.uninstalled.first()
	ch <- prometheus.MustNewConstMetric(authorityUnassignedDesc, prometheus.GaugeValue, float64(unassigned))
	self := n.catalog.Identity()
	now := n.src.Now()
	for _, d := range n.catalog.State().Domains() {
		if d.Pace != lifecycle.Paced || !d.Running() {
			continue
		}
		held := 0.0
		if d.Authority.Node == self.Node && d.Authority.Incarnation == self.Incarnation {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(domainAuthorityDesc, prometheus.GaugeValue, held, d.Name)
		if d.Mapping != nil && d.Mapping.Rate > 0 {
			ch <- prometheus.MustNewConstMetric(domainTickIntervalDesc, prometheus.GaugeValue, float64(d.Period)/1e9/d.Mapping.Rate, d.Name)
		}
		if t := n.registry.Progress(d.Name); t.ID > 0 && t.Generation == d.Generation {
			ch <- prometheus.MustNewConstMetric(domainTickLagDesc, prometheus.GaugeValue, float64(now-t.AuthorityUTC)/1e9, d.Name)
		}
	}
}
