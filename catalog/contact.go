package catalog

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Contact is what this node can tell of its contact with the consensus
// leader without a round trip: whether it is the leader, and a token that
// changes whenever it hears from one (an append or heartbeat). The token is
// raft's record of its last contact, which only this node's own time source
// may measure: a caller that samples Contact on its clock and sees the token
// change knows a leader reached it since its previous sample.
type Contact struct {
	// Leader is set while this node is the raft leader. raft's leader steps
	// down once it has not heard from a quorum for LeaderLeaseTimeout, so
	// a leader may be cut off for up to that long and still report it.
	Leader bool
	// Token changes with every contact from a leader; zero before the
	// first.
	Token int64
}

// Contact returns this node's contact with the leader.
func (n *Replica) Contact() Contact {
	c := Contact{Leader: n.raft.State() == raft.Leader}
	if t := n.raft.LastContact(); !t.IsZero() {
		c.Token = t.UnixNano()
	}
	return c
}

// Barrier commits a no-op through the leader (this node's registration,
// again) and returns the catalog revision the leader answered with: every
// command that committed before the barrier has at most that revision, so
// once this node has applied it, its state is no older than the leader's
// was when the barrier committed. It fails when no leader is known or the
// no-op does not commit within ctx.
func (n *Replica) Barrier(ctx context.Context) (uint64, error) {
	cmd := n.registration()
	cmd.RequestID = n.NewRequestID()
	if n.raft.State() == raft.Leader {
		res, err := n.Propose(ctx, cmd)
		if err == nil {
			err = res.Err()
		}
		return res.Revision, err
	}
	cc := n.cfg.Cluster
	if cc == nil || cc.Forward == nil {
		return 0, ErrNotLeader
	}
	leader, ok := n.Leader()
	if !ok || leader.APIAddr == "" {
		return 0, fmt.Errorf("%w: no leader is known", ErrNotLeader)
	}
	res, err := cc.Forward(ctx, leader, cmd)
	if err == nil {
		err = res.Err()
	}
	return res.Revision, err
}
