package node

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// authorityLease is a cluster member's proof that it may still act for the
// cluster: it samples its contact with the consensus leader
// (catalog.Contact) ContactPolls times per lease on the node's time source,
// and a sample that finds the node leader, or finds that a leader reached
// it since the previous sample, renews the lease from the time of that
// previous sample: the lease never runs from later than the contact that
// renewed it, however late a loaded machine runs the sample. While the lease holds the
// node vouches for its clocks; once it has not been renewed for longer than
// the lease the node stops: its producers' ticks are withheld (emit) and
// every attachment it serves is told the clock is interrupted
// (clockrt.Registry.SetInterrupted).
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
	src    timesource.Source
	logger *slog.Logger
	name   string
	deps   leaseDeps
	lease  time.Duration // zero: no lease (embedded)
	poll   time.Duration

	proof       atomic.Int64 // time.Duration: src.Monotonic() of the last renewal
	interrupted atomic.Bool  // the lease lapsed and the node has not caught up since

	cancel context.CancelFunc
	done   chan struct{}
}

// leaseDeps is what the lease reads and changes: the catalog's contact and
// barrier, the node's installation counter and its runtime's interruption.
type leaseDeps struct {
	contact        func() catalog.Contact
	barrier        func(ctx context.Context) (uint64, error)
	waitInstalled  func(ctx context.Context, rev uint64) error
	setInterrupted func(*clockrt.Interruption)
	// vouching runs after every sample that leaves the node vouching, so
	// what was withheld while it did not is handed on (Node.releaseWithheld);
	// nil runs nothing.
	vouching func()
}

// startAuthorityLease starts the lease of n's catalog, renewed from now.
func startAuthorityLease(n *Node, cat *catalog.Replica) *authorityLease {
	return newAuthorityLease(n.src, n.logger, n.cfg.Name, cat.AuthorityLease(), n.leaseDeps(cat))
}

// leaseDeps is what n's lease reads and changes in production.
func (n *Node) leaseDeps(cat *catalog.Replica) leaseDeps {
	return leaseDeps{
		contact:        cat.Contact,
		barrier:        cat.Barrier,
		waitInstalled:  n.WaitInstalledRevision,
		setInterrupted: n.registry.SetInterrupted,
		vouching:       n.releaseWithheld,
	}
}

// newAuthorityLease starts a lease of length lease (zero: none), renewed
// from now.
func newAuthorityLease(src timesource.Source, logger *slog.Logger, name string, lease time.Duration, deps leaseDeps) *authorityLease {
	l := &authorityLease{src: src, logger: logger, name: name, deps: deps, lease: lease, done: make(chan struct{})}
	l.proof.Store(int64(src.Monotonic()))
	if l.lease <= 0 {
		close(l.done)
		l.cancel = func() {}
		return l
	}
	l.poll = max(l.lease/catalog.ContactPolls, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.loop(ctx) // owned: stop cancels and waits
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
	return l.src.Monotonic()-time.Duration(l.proof.Load()) <= l.lease
}

func (l *authorityLease) loop(ctx context.Context) {
	defer close(l.done)
	last := l.deps.contact().Token
	prev := l.src.Monotonic() // when the previous sample was taken
	t := l.src.NewTimer(l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		now := l.src.Monotonic()
		c := l.deps.contact()
		if c.Leader || c.Token != last {
			// The contact came after the previous sample, which found
			// none: the lease runs from then, never from later than the
			// contact, however late this sample ran.
			last = c.Token
			l.proof.Store(int64(prev))
		}
		prev = now
		lapsed := now-time.Duration(l.proof.Load()) > l.lease
		switch {
		case lapsed && !l.interrupted.Load():
			l.interrupted.Store(true)
			cause := fmt.Sprintf("node %s has not heard from the cluster's leader for more than its authority lease of %s", l.name, l.lease)
			l.deps.setInterrupted(&clockrt.Interruption{Cause: cause})
			l.logger.Warn("authority lease lapsed: this node stops producing ticks and tells its attached clients their clocks are interrupted",
				"lease", l.lease)
		case !lapsed && l.interrupted.Load():
			if l.catchUp(ctx) {
				l.interrupted.Store(false)
				l.deps.setInterrupted(nil)
				l.logger.Info("authority lease renewed and caught up with the leader: clocks resume")
			}
		}
		// A lease can stop vouching between two samples without lapsing at
		// either (a late sample renews it from the one before), so what
		// was withheld is handed on after any sample that vouches, not only
		// after an interruption ends.
		if l.deps.vouching != nil && l.vouches() {
			l.deps.vouching()
		}
		t.Reset(l.poll)
	}
}

// catchUp commits a barrier through the leader and waits until this node
// has installed its revision, within one lease; it reports whether it did.
func (l *authorityLease) catchUp(ctx context.Context) bool {
	ctx, cancel := timesource.WithTimeout(ctx, l.src, l.lease)
	defer cancel()
	rev, err := l.deps.barrier(ctx)
	if err == nil {
		err = l.deps.waitInstalled(ctx, rev)
	}
	if err != nil {
		l.logger.Debug("catching up with the leader after a lapsed authority lease", "err", err)
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
func (n *Node) Interruption() *clockrt.Interruption { return n.registry.Interrupted() }

// ConfirmRead confirms that this node's state is no older than the
// leader's was when the call began, for a linearizable read: it commits a
// barrier through the leader and waits until it has installed the
// revision the barrier answered with. An embedded node is its own leader
// and confirms at once. A barrier refused for want of a confirmed leader
// (an election under way, the leader unknown here) or whose outcome is
// unknown is tried again, with the backoff of a write, as a write is
// (retryable): a read through an election waits for the next leader
// instead of failing. It fails with the last attempt's error when no
// leader answers within ctx, or within Config.WriteTimeout when ctx has
// no deadline.
func (n *Node) ConfirmRead(ctx context.Context) error {
	if n.lease == nil || n.lease.lease <= 0 {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var stop func()
		ctx, stop = n.writeDeadline(ctx, n.cfg.WriteTimeout)
		defer stop()
	}
	backoff := writeBackoffMin
	for attempt := 1; ; attempt++ {
		rev, err := n.catalog.Barrier(ctx)
		if err == nil {
			return n.WaitInstalledRevision(ctx, rev)
		}
		if ctx.Err() != nil || !retryable(err) || n.closed.Load() {
			return err
		}
		n.logger.Debug("read barrier did not commit; retrying", "attempt", attempt, "backoff", backoff, "err", err)
		if !n.wait(ctx, backoff) {
			return err
		}
		backoff = min(2*backoff, writeBackoffMax)
	}
}
