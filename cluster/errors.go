package cluster

import (
	"errors"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Sentinel errors of the cluster package.
var (
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("invalid cluster configuration")
	// ErrNotReady: the member has not finished starting.
	ErrNotReady = errors.New("cluster member is still starting; retry shortly")
	// ErrUnknownNode: Remove named a node that is not registered. It is
	// lifecycle.ErrUnknownNode, so it survives forwarding to the leader.
	ErrUnknownNode = lifecycle.ErrUnknownNode
	// ErrNoJoinAddress: a member with an empty data directory was neither
	// told to bootstrap nor given an address to join through.
	ErrNoJoinAddress = errors.New("nothing to join: pass --bootstrap for the first node or --join with a member's API address")
	// ErrRemovalRefused: Remove (or Leave) would leave the cluster with no
	// voter, or with fewer live voters than a quorum of those left; nothing
	// was changed.
	ErrRemovalRefused = errors.New("removal refused")
	// ErrNodeLive: RemoveNode without force named a node that is live.
	ErrNodeLive = errors.New("cannot drop live node")
)
