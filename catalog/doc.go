// Package catalog is the replicated catalog: the Raft FSM that holds domain
// lifecycle state, the commands it applies, snapshots and restore, and the
// node wrapper that opens an embedded single-node catalog or a cluster member.
//
// Callers never see raft types or errors: they are translated at this
// boundary (ErrNotLeader and friends). The FSM is deterministic: commands
// carry resolved values, and an undecodable committed entry is a bug that
// fails loudly.
package catalog
