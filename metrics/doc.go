// Package metrics is the shape of one node's Prometheus registry and of the
// listener that serves it: a registry with the Go runtime, process and build
// information collectors and raft's telemetry (NewRegistry), and the
// /metrics, /livez and /readyz handler (Handler) for the plain-HTTP
// metrics listener (NewHTTPServer).
//
// Every registry is its node's: a node (and the cluster member and session
// server around it) registers its own collectors into the registry it
// owns, so several nodes in one process, such as an in-process test
// cluster, never mix their series. This package keeps no registry of its
// own and never touches prometheus.DefaultRegisterer.
//
// # Raft's telemetry
//
// hashicorp/raft v1.7 reports through github.com/hashicorp/go-metrics/compat,
// which in the default build forwards to github.com/armon/go-metrics, whose
// sink is one process-wide global. The first NewRegistry or
// InstallRaftTelemetry (which a node calls when it is built, ahead of its
// registry, which it builds on first use) installs one armon/go-metrics
// Prometheus sink as that global (runtime sampling, host and service names
// off), and NewRegistry registers the same sink, as an unchecked
// collector, into every registry it builds. Raft's keys carry no node
// name, so raft's series (raft_apply, raft_commitTime,
// raft_fsm_apply, raft_state_leader, raft_replication_*, …; timers in
// milliseconds, as go-metrics reports them) are the process's: in a process
// that runs one node, as nspl serve does, they are exactly that node's; in
// a process that runs several, every node's registry shows the same
// process-wide series. A series raft has not updated for a minute expires
// (the sink's default). Nothing else in the process may install a
// go-metrics global sink, or raft's series stop reaching the registries.
//
// Never use this package for a node's domain or session counters: those
// live with the package that counts them, as collectors registered into the
// node's registry.
package metrics
