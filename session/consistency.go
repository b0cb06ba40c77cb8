package session

import (
	"context"
	"fmt"

	"github.com/nspl-dev/nspl/wire"
)

// ReadConsistency is what a session's reads promise (wire.ReadConsistency:
// the levels are part of the protocol a remote client speaks).
type ReadConsistency = wire.ReadConsistency

// Read consistency levels (wire.ReadLocal, wire.ReadLinearizable).
const (
	ReadLocal        = wire.ReadLocal
	ReadLinearizable = wire.ReadLinearizable
)

// ErrReadNotConfirmed: a read at the linearizable level could not be
// confirmed through the cluster's leader.
var ErrReadNotConfirmed = wire.NewSentinel("read_not_confirmed", "this read could not be confirmed through the cluster's leader; retry once the cluster has a leader this node reaches, read through another node, or read at the local level (it may be stale)")

// ParseReadConsistency returns the level s names ("local" or
// "linearizable"); empty is ReadLocal (wire.ParseReadConsistency).
func ParseReadConsistency(s string) (ReadConsistency, error) { return wire.ParseReadConsistency(s) }

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
