package node

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/runtime"
)

// authorityLease is a cluster member's proof that it may still act for the
// cluster: it samples its contact with the consensus leader
// (catalog.Contact) ContactPolls times per lease on the node's time source,
// and a sample that finds the node leader, or finds that a leader reached
// it since the previous sample, renews the lease. While the lease holds the
// node vouches for its clocks; once it has not been renewed for longer than
// the lease the node stops: its producers' ticks are withheld (emit) and
// every attachment it serves is told the clock is interrupted
// (runtime.Registry.SetInterrupted).
//
// Regaining contact does not end the interruption by itself: the node may
// have missed commits (an authority moved away from it, a STOP, a new
// generation), so it first commits a barrier through the leader and waits
// until it has installed the revision the barrier answered with. Only then
// does it vouch again, so a node back from a cut never produces under, nor
// serves, the state it had before it.
//
// The leader, for its part, moves an authority away from a node it lost
// only after catalog.FenceWait, by which time that node has stopped.
//
// An embedded node (no cluster) is its own leader: it has no lease and
// always vouches.
type authorityLease struct {
	n     *Node
	lease time.Duration // zero: no lease (embedded)
	poll  time.Duration

	proof       atomic.Int64 // time.Duration: src.Monotonic() of the last renewal
	interrupted atomic.Bool  // the lease lapsed and the node has not caught up since

	cancel context.CancelFunc
	done   chan struct{}
}

// startAuthorityLease starts the lease of n's catalog, renewed from now.
func startAuthorityLease(n *Node, cat *catalog.Node) *authorityLease {
	l := &authorityLease{n: n, lease: cat.AuthorityLease(), done: make(chan struct{})}
	l.proof.Store(int64(n.src.Monotonic()))
	if l.lease <= 0 {
		close(l.done)
		l.cancel = func() {}
		return l
	}
	l.poll = max(l.lease/catalog.ContactPolls, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.loop(ctx, cat) // owned: stop cancels and waits
	return l
}

// stop ends the loop and waits for it.
func (l *authorityLease) stop() {
	l.cancel()
	<-l.done
}

// vouches reports whether the node may produce ticks now: the lease was
// renewed within its length and the node is not catching up.
func (l *authorityLease) vouches() bool {
	if l.lease <= 0 {
		return true
	}
	if l.interrupted.Load() {
		return false
	}
	return l.n.src.Monotonic()-time.Duration(l.proof.Load()) <= l.lease
}

func (l *authorityLease) loop(ctx context.Context, cat *catalog.Node) {
	defer close(l.done)
	last := cat.Contact().Token
	t := l.n.src.NewTimer(l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		c := cat.Contact()
		now := l.n.src.Monotonic()
		if c.Leader || c.Token != last {
			last = c.Token
			l.proof.Store(int64(now))
		}
		lapsed := now-time.Duration(l.proof.Load()) > l.lease
		switch {
		case lapsed && !l.interrupted.Load():
			l.interrupted.Store(true)
			cause := fmt.Sprintf("node %s has not heard from the cluster's leader for more than its authority lease of %s", l.n.cfg.Name, l.lease)
			l.n.registry.SetInterrupted(&runtime.Interruption{Cause: cause})
			l.n.logger.Warn("authority lease lapsed: this node stops producing ticks and tells its attached clients their clocks are interrupted",
				"lease", l.lease)
		case !lapsed && l.interrupted.Load():
			if l.catchUp(ctx, cat) {
				l.interrupted.Store(false)
				l.n.registry.SetInterrupted(nil)
				l.n.logger.Info("authority lease renewed and caught up with the leader: clocks resume")
			}
		}
		t.Reset(l.poll)
	}
}

// catchUp commits a barrier through the leader and waits until this node
// has installed its revision, within one lease; it reports whether it did.
func (l *authorityLease) catchUp(ctx context.Context, cat *catalog.Node) bool {
	ctx, cancel := context.WithTimeout(ctx, l.lease)
	defer cancel()
	rev, err := cat.Barrier(ctx)
	if err == nil {
		err = l.n.WaitInstalledRevision(ctx, rev)
	}
	if err != nil {
		l.n.logger.Debug("catching up with the leader after a lapsed authority lease", "err", err)
		return false
	}
	return true
}

// Vouches reports whether this node can vouch for its clocks now: it is an
// embedded node, or a member whose authority lease holds and which is not
// catching up with the leader after the lease lapsed. A node that does not
// vouch produces no ticks, and its sessions' attachments are told their
// clocks are interrupted.
func (n *Node) Vouches() bool { return n.lease == nil || n.lease.vouches() }

// Interruption returns why this node does not vouch for its clocks, nil
// while it does.
func (n *Node) Interruption() *runtime.Interruption { return n.registry.Interrupted() }
