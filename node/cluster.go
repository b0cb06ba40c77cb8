package node

import (
	"context"
	"errors"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
)

// commit commits cmd through the local catalog, or through the leader
// (Config.Forward) when this node is not the leader. A forwarded command
// carries the values this node resolved (sampled UTC, chosen authority), so
// the leader commits exactly what a local commit would have.
func (n *Node) commit(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	if n.closed.Load() {
		// Checked before proposing: a closed catalog is not the leader,
		// and a closed node must not forward the write to one.
		return lifecycle.Result{}, ErrClosed
	}
	start := n.src.Monotonic()
	res, err := n.catalog.Propose(ctx, cmd)
	if err != nil && n.cfg.Forward != nil && errors.Is(err, catalog.ErrNotLeader) {
		res, err = n.cfg.Forward(ctx, cmd)
	}
	if err == nil && n.cfg.OnCommit != nil {
		n.cfg.OnCommit(n.src.Monotonic() - start)
	}
	return res, err
}

// AdvertisedRevision returns the runtime revision this node advertises to
// a clock authority: the catalog revision whose domain clocks, authority
// fences included, it has installed; 0 until the node installed the
// committed domains since it started. Every committed revision installs all
// domain lifecycles at once, in commit order, so once a revision is
// installed every domain clock the node holds equals that revision's
// committed lifecycle.
func (n *Node) AdvertisedRevision() uint64 {
	_, rev, _ := n.Installed()
	return rev
}
