// Package cluster composes one nspl cluster member in a process: a node
// (package node) whose catalog is a raft member over mutually
// authenticated TLS, the peer interconnect (package interconnect) that
// carries progress, joins, removals and forwarded commands between nodes,
// the application-health prober that feeds effective availability, and the
// progress delivery of this node's clock authorities.
//
// It stops at the member: the API server the member's sessions and peers
// reach it through is wired to it by package serve, the composition root
// nspl serve and the test cluster both run, because a member must not link
// the sessions served on it (cluster links neither session nor server).
// Using it, as serve does:
//
//	m, err := cluster.New(cluster.Config{
//		Node: "n1", DataDir: dir, PKIDir: certs,
//		RaftAddr: "127.0.0.1:7001", APIAddr: "127.0.0.1:8001",
//		Bootstrap: true, // the first node; the others set Join instead
//	})
//	// mount m.PeerHandler() under interconnect.PathPrefix on the node's
//	// TLS API listener and serve it: a starting member answers its peers
//	err = m.Open(ctx)      // joins or bootstraps, registers, installs
//	n := m.Node()          // sessions run against it; statements on a follower go through the leader
//	st := m.Status()       // the member's view; st.Wire() is what SHOW CLUSTER STATUS shows
//	met := m.Metrics()     // the member's counters, also in n.MetricsRegistry()
//	err = m.Close()
//
// Start is New and Open in one step, for a member whose peers need not
// reach it while it opens.
//
// Metrics: a member registers its series into its node's own registry
// (node.Node.MetricsRegistry, served by n.MetricsHandler): the counters of
// Metrics under their nspl_* names, and the interconnect's
// nspl_interconnect_requests_total{route,code} and
// nspl_interconnect_request_duration_seconds{route}, observed on the
// member's time source around every request its peer handler serves. The
// route label is one of the handler's routes or "other", so no caller can
// grow the label set.
//
// Availability: every member probes every other registered member's
// /v1/peer/status each ProbeInterval, with ProbeAttempts attempts of
// ProbeTimeout each; the verdict after those attempts (and the incarnation
// that answered) is the application-health observation, raft's heartbeat
// failures and resumptions on the leader are the gossip verdict, and
// Availability (availability.go) merges them; the probes are probe.go's.
// Any change of the merged verdict, of the raft configuration or of
// leadership makes the leader reconcile clock authorities at once; the
// catalog retries every 200 ms until a reassignment commits.
//
// Completion: a lifecycle statement returns once every other live
// registered member has installed its revision (completion.go). A member
// counts, and so advertises, a revision installed only once every producer
// it retires has exited and that producer's progress delivery has ended
// (node.Config.OnRetire, which the member wires to Delivery.Retire), so a
// STOP returns after the stopped generation's producer is gone on every
// node it waited for, wherever the authority ran. A member
// that serves statements follows each other live member's installed
// stream (interconnect.InstalledWatch: from its first statement until a
// minute passes without one), so the wait costs no request: it watches the
// revisions the peers push. A peer whose stream is down or not yet up
// (or up under an incarnation other than the registered one) is asked
// through the installed route instead, once per statement, so the boundary
// never depends on a stream. The leader's followers learn of a commit with
// the barrier the leader appends after it (catalog), not its replication
// heartbeat.
//
// A member never reads the wall clock except through its time source,
// which also arms its probe attempts' timeouts and its progress requests'
// deadlines (its other request deadlines are physical bounds on I/O, not
// clock reads), and Close stops every goroutine it started.
package cluster
