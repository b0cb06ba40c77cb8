package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns a new registry holding the Go runtime collector
// (go_goroutines, go_memstats_*, …), the process collector
// (process_resident_memory_bytes, process_cpu_seconds_total, …), the build
// information (go_build_info) and raft's process-wide telemetry (see the
// package doc). Its owner registers its own collectors into it.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		raftTelemetry(),
	)
	return r
}
