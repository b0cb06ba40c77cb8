// Package catalog is the replicated catalog: the Raft FSM that holds domain
// lifecycle state (lifecycle.State), the framing of its snapshots, and the
// Replica that opens it on hashicorp/raft, either as an embedded single
// node or as one member of a cluster (Config.Cluster). A Replica is the
// catalog's part of a node, named apart from the node (package node) that
// holds it and the registered node (lifecycle.RegisteredNode) it records.
//
// Using it:
//
//	n, err := catalog.Open(ctx, catalog.Config{NodeName: "local", DataDir: dir, OnChange: install})
//	res, err := n.Propose(ctx, cmd) // commit one lifecycle.Command; res.Err() is the domain error
//	s := n.State()                  // lock-free read of the latest applied state
//	err = n.Close()
//
// Config.OnChange runs on the apply goroutine for every change in commit
// order, restores included, before the Propose that caused it returns, so
// the runtime can install domain lifecycles before anything else uses the
// revision.
//
// The leader runs one background loop: it confirms each new term's
// leadership by committing its own (idempotent) registration, then
// reconciles clock authorities (lifecycle.Reconcile) after every change
// that leaves a running paced domain (the others wake nothing) and every
// RetryInterval while a reassignment has not committed.
//
// Two shapes share this code. The embedded single node is one voter on
// raft's in-memory transport. A cluster member (Config.Cluster) runs raft
// over TCP with mutually authenticated TLS (a stream layer that closes every
// connection it made or accepted when the node closes), with 200 ms
// heartbeat, election and lease timeouts and raft's pre-vote by default,
// so a dead leader is replaced within 0.2–0.7 s (see
// DefaultHeartbeatTimeout for the trade-off with stability). A leader moves
// a lost node's clock authorities only after FenceWait, the lost node's
// authority lease and its sampling period counted from when the leader
// first saw the node ineligible: by then the node, which renews its lease
// only from a leader's contact, has stopped producing (fence.go states the
// argument, and why raft's leader lease need not be waited out). A member
// whose stores are empty either bootstraps a new cluster or, while its raft
// configuration does not name it, asks an existing member to add it
// (ClusterConfig.Join, which ends in the leader's AddVoter); a follower
// registers its incarnation through the leader (ClusterConfig.Forward). Open
// returns once the registration is applied locally. The leader's loop also
// wakes on a signal of Config.AvailabilityChanged and on raft's leadership
// and configuration observations, so a change of effective availability or
// topology reconciles authorities at once; raft's heartbeat and leadership
// observations, with the registered node name of the server they concern,
// reach the caller through ClusterConfig.OnObservation, drained on a
// goroutine of their own so raft never waits for them. Leader names the
// leader with its registered API address, for forwarding.
//
// Every proposal carries a request id (Propose picks one with
// NewRequestID unless the caller did), and the FSM remembers the last
// RequestWindow ids with their results, replicated and in every snapshot:
// a caller that retries after ErrOutcomeUnknown or a leader change, with
// the same id, commits the write at most once and gets the first result.
//
// Callers never see raft types or errors: they are translated at this
// boundary (ErrNotLeader, ErrLeadershipUnconfirmed, ErrOutcomeUnknown and
// the rest of the sentinel block in errors.go). The FSM is deterministic:
// commands carry resolved values (the sampled UTC anchor, the chosen
// authority), domain errors come back in the typed lifecycle.Result, and an
// undecodable committed entry halts the FSM (see FSM) instead of being
// skipped.
//
// Storage: in memory by default (raft's in-memory log, stable and snapshot
// stores, in-memory transport); with Config.DataDir, raft-boltdb v2 for the
// log and stable store (fsync on every write batch) and raft's file
// snapshot store, under DataDir/catalog. The raft server ID is persisted on
// first start and stays stable for the life of the data directory; the
// node incarnation is fresh and random on every Open and is registered
// through a committed command once leadership is confirmed.
//
// One file per concept: open.go opens and closes a Replica and reads its
// state; leadership.go is the background loop (confirmation,
// reconciliation, Leader); propose.go commits commands under request ids;
// membership.go joins, registers, observes peers and changes the raft
// configuration; transport.go is raft's TLS stream layer; config.go holds
// Config and ClusterConfig; fsm.go, snapshot.go and storage.go the state
// raft replicates and where it is kept.
//
// This package must never read the wall clock to decide catalog contents,
// and never apply anything that was not committed through raft.
package catalog
