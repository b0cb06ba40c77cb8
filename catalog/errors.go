package catalog

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/wire"
)

// Sentinel errors of the catalog. Raft's own errors never leave this
// package: they are translated into these at the boundary, so callers test
// with errors.Is and never import raft.
var (
	// ErrNotLeader: this node is not the consensus leader, so it cannot
	// commit. The error is a *NotLeaderError naming the known leader, if any;
	// nothing was proposed, so the write can be sent to the leader as is.
	ErrNotLeader = wire.NewSentinel("not_leader", "this catalog node is not the leader; send the write to the leader")
	// ErrLeadershipUnconfirmed: this node was just elected and has not yet
	// had a quorum acknowledge its leadership (Barrier), so it refuses
	// writes. Nothing was proposed; retry shortly.
	ErrLeadershipUnconfirmed = wire.NewSentinel("leadership_unconfirmed", "catalog leadership is not confirmed yet; retry the write shortly")
	// ErrOutcomeUnknown: the command was handed to raft but this node cannot
	// tell whether it committed (leadership lost, cancelled while waiting).
	// A retry must be idempotent or compare-and-set guarded.
	ErrOutcomeUnknown = wire.NewSentinel("outcome_unknown", "catalog write outcome is unknown; check the catalog state before retrying")
	// ErrLeadershipLost: leadership was lost after the command was handed
	// to raft. It wraps ErrOutcomeUnknown.
	ErrLeadershipLost = fmt.Errorf("catalog leadership was lost while committing: %w", ErrOutcomeUnknown)
	// ErrTimeout: raft did not accept the command before the context
	// deadline; the command was not proposed and may be retried.
	ErrTimeout = wire.NewSentinel("catalog_timeout", "catalog write was not accepted in time; retry or raise the deadline", "timeout")
	// ErrShutdown: the catalog node is closed or closing.
	ErrShutdown = wire.NewSentinel("catalog_shutdown", "catalog node is shut down; open it again", "shutdown")
	// ErrHalted: the node met a committed entry it cannot apply and
	// stopped applying (see FSM); the data directory needs inspection.
	ErrHalted = errors.New("catalog halted on a committed entry it cannot apply; inspect the data directory")
	// ErrDataDir: the data directory cannot be used (unreadable node
	// identity, locked by another process, unwritable).
	ErrDataDir = errors.New("catalog data directory cannot be used")
	// ErrSnapshot: a snapshot is truncated, corrupt or of an unknown
	// format version, and was not restored.
	ErrSnapshot = errors.New("catalog snapshot cannot be restored")
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("invalid catalog configuration")
)

// NotLeaderError is ErrNotLeader with the leader this node knows of.
// Leader and LeaderAddress are empty when no leader is known (an election
// is in progress).
type NotLeaderError struct {
	Leader        string
	LeaderAddress string
}

// Error names the leader when one is known.
func (e *NotLeaderError) Error() string {
	if e.Leader == "" {
		return "this catalog node is not the leader and no leader is known; retry after the election"
	}
	return fmt.Sprintf("this catalog node is not the leader; send the write to leader %q at %q", e.Leader, e.LeaderAddress)
}

// Unwrap returns ErrNotLeader.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// translate maps an error returned by raft into the catalog's vocabulary.
// enqueued tells whether the command may already be in the log: an unknown
// raft error after enqueueing is reported as an unknown outcome.
func (n *Replica) translate(err error, enqueued bool) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		addr, id := n.raft.LeaderWithID()
		return &NotLeaderError{Leader: string(id), LeaderAddress: string(addr)}
	case errors.Is(err, raft.ErrLeadershipLost):
		return ErrLeadershipLost
	case errors.Is(err, raft.ErrRaftShutdown):
		if n.fsm.halted() != nil {
			return ErrHalted
		}
		if enqueued {
			return fmt.Errorf("%w: %w", ErrOutcomeUnknown, ErrShutdown)
		}
		return ErrShutdown
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return ErrTimeout
	case enqueued:
		return fmt.Errorf("%w: raft: %v", ErrOutcomeUnknown, err)
	default:
		return fmt.Errorf("catalog: raft: %v", err)
	}
}

// Sentinels returns the package's coded sentinels, for the module's one
// code table. Older nodes spelled the timeout and shutdown codes without
// the catalog_ prefix; those spellings still decode (wire.AliasesOf).
func Sentinels() []error {
	return []error{ErrNotLeader, ErrLeadershipUnconfirmed, ErrOutcomeUnknown, ErrTimeout, ErrShutdown}
}
