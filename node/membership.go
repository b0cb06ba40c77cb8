package node

import (
	"context"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
)

// The operations below are what a cluster member (package cluster) needs
// of its node's catalog and runtime: reading the committed registry and the
// raft configuration, changing membership, proposing a command forwarded by
// a peer, and reading an installed domain clock. The catalog and the
// registry themselves stay private, so every use goes through a method
// that says what it is for.

// CatalogState returns the latest applied catalog state without taking a
// lock. It is shared and read-only (see catalog.Replica.State).
func (n *Node) CatalogState() *lifecycle.State { return n.catalog.State() }

// CatalogRevision returns the catalog revision of CatalogState.
func (n *Node) CatalogRevision() uint64 { return n.catalog.Revision() }

// Term returns the consensus term this node is in.
func (n *Node) Term() uint64 { return n.catalog.Term() }

// IsLeader reports whether this node is the consensus leader with
// confirmed leadership.
func (n *Node) IsLeader() bool { return n.catalog.IsLeader() }

// Leader returns the consensus leader as this node knows it, and false
// while none is known.
func (n *Node) Leader() (catalog.Leader, bool) { return n.catalog.Leader() }

// ServerID returns the raft server ID of this node's catalog.
func (n *Node) ServerID() string { return n.catalog.ServerID() }

// RaftAddress returns the raft address this node advertises.
func (n *Node) RaftAddress() string { return n.catalog.RaftAddress() }

// Servers returns the latest raft configuration this node knows.
func (n *Node) Servers() ([]catalog.Server, error) { return n.catalog.Servers() }

// AddVoter adds the raft server as a voter; only the confirmed leader may
// (see catalog.Replica.AddVoter).
func (n *Node) AddVoter(ctx context.Context, serverID, raftAddr string) error {
	return n.catalog.AddVoter(ctx, serverID, raftAddr)
}

// RemoveServer removes the raft server from the cluster (see
// catalog.Replica.RemoveServer).
func (n *Node) RemoveServer(ctx context.Context, serverID string) error {
	return n.catalog.RemoveServer(ctx, serverID)
}

// Propose makes one attempt to commit cmd through the local catalog, as
// catalog.Replica.Propose: it neither forwards nor retries, and fails with
// catalog.ErrNotLeader on a follower. It is the path of a command a peer
// forwarded to this node, which carries the values its sender resolved;
// statements commit through the control-plane handler instead.
func (n *Node) Propose(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	return n.catalog.Propose(ctx, cmd)
}

// Installation returns the domain's installed clock on this node, or a
// missing installation when the node holds none (clockrt.Registry.Current).
func (n *Node) Installation(domain string) *clockrt.Installation {
	return n.registry.Current(domain)
}

// Progress returns the newest accepted tick of the domain on this node
// (clockrt.Registry.Progress).
func (n *Node) Progress(domain string) clockrt.Tick { return n.registry.Progress(domain) }

// AuthoritiesReconciled returns the newest catalog revision this node, as
// the leader, has reconciled every clock authority against, and a channel
// closed when it next moves (catalog.Replica.Reconciled).
func (n *Node) AuthoritiesReconciled() (uint64, <-chan struct{}) { return n.catalog.Reconciled() }
