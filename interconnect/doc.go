// Package interconnect is the node-to-node half of an nspl cluster: typed
// HTTP/2 requests over mutually authenticated TLS under /v1/peer/.
//
//	POST /v1/peer/progress  domain_clock_progress: one tick from the authority
//	POST /v1/peer/join      add the calling node as a voter (via the leader)
//	POST /v1/peer/propose   commit a catalog command (via the leader)
//	POST /v1/peer/remove    remove a node from the cluster (via the leader)
//	GET  /v1/peer/status    incarnation, advertised revision, health
//	POST /v1/peer/installed answer once a catalog revision is installed
//	GET  /v1/peer/installed/stream
//	                        every installed catalog revision, pushed
//
// Handler serves them against a Backend; the reporting or calling node's
// name always comes from the verified peer certificate (pki.PeerName),
// never from a request body, and a caller without a node certificate is
// refused. Each route then authorizes that name against the committed
// membership (authorize.go): a join only from the joining node itself or
// forwarded by a current voter, everything else only from a current
// member; the forwarding header is never trusted on its own. Refusals are
// ErrForbidden, counted (Metrics.Forbidden) and logged. Every body is
// capped (MaxBodyBytes) and decoded strictly.
//
// Delivery is the authority's side of progress: for each peer and domain at
// most one request in flight and one replaceable pending report, a
// two-second deadline per request, a 200 ms backoff after a failure and then
// the newest report, only to live peers that advertise the revision the
// producer started from (or a later one), and the newest retained report to
// a new or reconnected peer. Retiring a producer's delivery (Retire, which
// the node calls once the producer exited) cancels its in-flight requests
// and backoffs and returns once its lanes have ended, so the node counts
// the revision that retired the producer installed only after that. A
// node-wide limit bounds concurrent attempts. Nothing queues with time,
// rate or peer slowness.
//
// The installed stream (installed.go) is one long-lived response per
// subscriber: the receiver writes its incarnation and installed revision
// when the stream opens, after every installation and at least every
// DefaultStreamHeartbeat, always the newest (a slow subscriber gets fewer,
// newer lines; nothing queues, and no installation waits for a
// subscriber), re-checking at each heartbeat that the subscriber is a
// member. InstalledWatch is the subscriber's side: one stream per live
// peer while the node serves statements (DefaultStreamLinger after the
// last), reopened after a backoff when it fails or stays quiet for
// DefaultStreamIdleTimeout.
//
// Client makes the requests; its errors translate the remote catalog
// errors back to catalog's sentinels, so forwarding a statement returns the
// same error a local commit would.
//
// This package never decides what is committed or installed: it carries
// reports and commands between nodes and hands them to its Backend.
package interconnect
