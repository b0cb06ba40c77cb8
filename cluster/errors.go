package cluster

import "errors"

// Sentinel errors of the cluster package.
var (
	// ErrConfig: the Config is invalid.
	ErrConfig = errors.New("invalid cluster configuration")
	// ErrNotReady: the member has not finished starting.
	ErrNotReady = errors.New("cluster member is still starting; retry shortly")
	// ErrUnknownNode: Remove named a node that is not registered.
	ErrUnknownNode = errors.New("node is not a member of this cluster; run SHOW CLUSTER STATUS to see the members")
	// ErrNoJoinAddress: a member with an empty data directory was neither
	// told to bootstrap nor given an address to join through.
	ErrNoJoinAddress = errors.New("nothing to join: pass --bootstrap for the first node or --join with a member's API address")
)
