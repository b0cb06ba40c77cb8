package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/wire"
)

// ReadConsistency is what a session's reads (LIST DOMAINS, DESCRIBE
// DOMAIN, SHOW CLUSTER STATUS, ATTACH) promise.
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
	// read that cannot be confirmed (no leader reachable) fails with
	// ErrReadNotConfirmed instead of answering. It costs a commit through
	// the leader per read.
	ReadLinearizable ReadConsistency = "linearizable"
)

// ErrReadNotConfirmed: a read at the linearizable level could not be
// confirmed through the cluster's leader.
var ErrReadNotConfirmed = errors.New("this read could not be confirmed through the cluster's leader; retry once the cluster has a leader this node reaches, read through another node, or read at the local level (it may be stale)")

func init() { wire.RegisterCode("read_not_confirmed", ErrReadNotConfirmed) }

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

// readConfirmer is what an Engine that is one of several replicas offers
// for linearizable reads: a barrier through the leader, installed here. An
// engine without it (an embedded node, its own leader) reads linearizably
// from its own state.
type readConfirmer interface {
	ConfirmRead(ctx context.Context) error
}

// confirmRead confirms a read at the session's level; nil at the local
// level.
func (s *Session) confirmRead(ctx context.Context) error {
	if s.readLevel != ReadLinearizable {
		return nil
	}
	e, ok := s.node.(readConfirmer)
	if !ok {
		return nil
	}
	if err := e.ConfirmRead(ctx); err != nil {
		return fmt.Errorf("%w (%w)", ErrReadNotConfirmed, err)
	}
	return nil
}
