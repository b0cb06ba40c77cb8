package catalog

import (
	"context"

	"github.com/nspl-dev/nspl/lifecycle"
)

// The helpers below read a Replica the way the tests of this package need to;
// no production caller does, so they live beside the tests.

// WaitRevision waits until the applied catalog revision is at least rev
// and returns the state at that point.
func (n *Replica) WaitRevision(ctx context.Context, rev uint64) (*lifecycle.State, error) {
	if s := n.State(); s.Revision() >= rev {
		return s, nil
	}
	sub := n.Subscribe()
	defer sub.Close()
	for {
		select {
		case c, ok := <-sub.C():
			if !ok {
				return nil, ErrShutdown
			}
			if c.Revision >= rev {
				return c.State, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// AuthorityInputs returns what lifecycle.ResolveStart and
// lifecycle.ResolveTransaction need to choose a paced domain's initial
// authority on this node, read against s: the effectively available node
// incarnations (Config.Available) and the names of the current raft voters.
func (n *Replica) AuthorityInputs(s *lifecycle.State) (available []lifecycle.NodeIncarnation, voters []string, err error) {
	ids, err := n.Voters()
	if err != nil {
		return nil, nil, err
	}
	return n.cfg.Available(s), s.VoterNames(ids), nil
}
