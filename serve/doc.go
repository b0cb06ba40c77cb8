// Package serve is the composition root of a serving cluster member: one
// Process is what one nspl serve runs, a cluster member (package cluster)
// and its node, the API server (package server) on the API listener with
// the member's peer handler, cluster status, leave and remove wired in,
// and the metrics listener. nspl serve and the test cluster
// (internal/testcluster) both start their members here, so a member under
// test is wired exactly as one in production; what a test needs besides
// (a fault network's dialer, a fake time source, listeners it bound
// itself) comes in through Config, never through a second wiring.
//
// Using it:
//
//	p, err := serve.Start(ctx, serve.Config{
//		Member:   cluster.Config{Node: "n1", DataDir: dir, Material: mat, RaftAddr: "127.0.0.1:7001", Bootstrap: true},
//		Listener: apiLn,                    // sessions, peers, /healthz, /metrics, the console
//		MetricsListener: metricsLn,         // optional plain-HTTP /metrics, /livez, /readyz
//		Server:   server.Config{Console: true, Token: token},
//		Left:     stop,                     // LEAVE ends the program
//	})
//	...
//	_ = p.Drain(drainCtx) // on SIGTERM: sessions finish and end
//	err = p.Close()
//
// Start serves both listeners from its first moment: the metrics listener
// answers /livez while the node starts, and the API listener serves the
// member's peer handler (which answers for a starting member itself, so a
// restarting member answers its peers) while every other route answers
// 503 until the node has opened. An insecure Process (Config.Insecure) is
// one node alone, without raft listener, peers or TLS, on loopback.
//
// Why a package of its own, where ../shared/DESIGN.md puts the composition
// root in cluster: a member must not link the sessions served on it
// (cluster links neither session nor server, and a test holds it), while
// the root wires both. So cluster composes the member (node, raft over
// TLS, interconnect, availability, delivery) and stops there, and serve
// puts a member and its server together above both. Only serve, the
// embedding root package (its console on an embedded node) and tests build
// a server.Server; only serve, the root package and cluster open a node.
//
// serve never reads flags or the environment and never exits the process:
// cmd/nspl turns flags into a Config, prints what it serves, and owns the
// signals and the drain timeout.
package serve
