package wire

import "fmt"

// ReadConsistency is what a session's reads (LIST DOMAINS, DESCRIBE
// DOMAIN, SHOW CLUSTER STATUS, ATTACH) promise. A remote client asks for a
// level with ReadConsistencyHeader; package session implements them.
type ReadConsistency string

// Read consistency levels.
const (
	// ReadLocal reads the serving node's own installation of the catalog:
	// it sees every change the node has installed, and so the session's
	// own writes and every statement that returned while the node was
	// live (the completion boundary), but a node cut off from the leader
	// answers from the state it has, with a warning. It costs nothing.
	ReadLocal ReadConsistency = "local"
	// ReadLinearizable confirms each read through the consensus leader
	// first: the node commits a barrier through the leader and waits until
	// it has installed the revision the barrier answered with, so the read
	// sees every change committed before it began, wherever it was made. A
	// read that cannot be confirmed (no leader reachable) fails instead of
	// answering. It costs a commit through the leader per read.
	ReadLinearizable ReadConsistency = "linearizable"
)

// ParseReadConsistency returns the level s names ("local" or
// "linearizable"); empty is ReadLocal.
func ParseReadConsistency(s string) (ReadConsistency, error) {
	switch ReadConsistency(s) {
	case "", ReadLocal:
		return ReadLocal, nil
	case ReadLinearizable:
		return ReadLinearizable, nil
	}
	return "", fmt.Errorf("unknown read consistency %q; use local or linearizable", s)
}
