package metrics

import (
	"sync"

	gometrics "github.com/armon/go-metrics"
	gmprometheus "github.com/armon/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	raftOnce sync.Once
	raftSink *gmprometheus.PrometheusSink
)

// InstallRaftTelemetry installs the process-wide go-metrics sink raft
// reports to, once per process; NewRegistry does too. Call it before raft
// starts when the registry is built later, so that nothing raft reports in
// between is lost. It is safe for concurrent use.
func InstallRaftTelemetry() { raftTelemetry() }

// raftTelemetry returns the collector of the process-wide go-metrics sink
// raft reports to, installing the sink on first use.
func raftTelemetry() prometheus.Collector {
	raftOnce.Do(func() {
		// The sink registers itself with a registerer; give it one of its
		// own so that every node's registry adds it as an unchecked
		// collector instead (sinkCollector).
		sink, err := gmprometheus.NewPrometheusSinkFrom(gmprometheus.PrometheusOpts{
			Expiration: gmprometheus.DefaultPrometheusOpts.Expiration,
			Registerer: prometheus.NewRegistry(),
		})
		if err != nil {
			panic("metrics: the go-metrics prometheus sink: " + err.Error()) // a fresh registry refuses nothing
		}
		conf := gometrics.DefaultConfig("")
		conf.EnableHostname = false
		conf.EnableHostnameLabel = false
		conf.EnableServiceLabel = false
		conf.EnableRuntimeMetrics = false // the Go collector has them; runtime sampling would start an unowned goroutine
		if _, err := gometrics.NewGlobal(conf, sink); err != nil {
			panic("metrics: install the go-metrics sink: " + err.Error()) // New fails on nothing this configuration sets
		}
		raftSink = sink
	})
	return sinkCollector{raftSink}
}

// sinkCollector is the go-metrics sink as an unchecked collector: raft
// creates its series as it goes, so they cannot be described up front, and
// one sink can be registered into any number of registries.
type sinkCollector struct{ sink *gmprometheus.PrometheusSink }

// Describe describes nothing, which makes the collector unchecked.
func (sinkCollector) Describe(chan<- *prometheus.Desc) {}

// Collect collects raft's current series.
func (c sinkCollector) Collect(ch chan<- prometheus.Metric) { c.sink.Collect(ch) }
