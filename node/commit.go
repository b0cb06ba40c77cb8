package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// Timing of the write path.
const (
	// DefaultWriteTimeout bounds a statement's write whose context has no
	// deadline of its own: the write retries through elections until then
	// (see commit).
	DefaultWriteTimeout = 10 * time.Second
	// writeBackoffMin and writeBackoffMax bound the wait between two
	// attempts of one write; it doubles from the first to the second.
	writeBackoffMin = 10 * time.Millisecond
	writeBackoffMax = 250 * time.Millisecond
)

// WriteDeadlineError is a write that had not committed when its deadline
// expired (or its context was cancelled) while it was retrying through a
// leadership change. It matches the context's error and, when an attempt
// may have reached raft, catalog.ErrOutcomeUnknown; otherwise
// catalog.ErrTimeout (nothing was committed).
type WriteDeadlineError struct {
	// Attempts is how many times the write was tried.
	Attempts int
	// Elapsed is how long it was tried for, on the node's time source.
	Elapsed time.Duration
	// Unknown is set when an attempt may have committed.
	Unknown bool
	// Cause is the context's cause: context.DeadlineExceeded or
	// context.Canceled.
	Cause error
	// Last is the last attempt's error.
	Last error
}

// Error says what happened and what to check.
func (e *WriteDeadlineError) Error() string {
	why := "its deadline expired"
	if errors.Is(e.Cause, context.Canceled) {
		why = "it was cancelled"
	}
	if e.Unknown {
		return fmt.Sprintf("catalog write outcome is unknown: %s after %d attempts over %s while the cluster changed leader (last: %v); it may have committed, so check the catalog (LIST DOMAINS, DESCRIBE DOMAIN) before running it again",
			why, e.Attempts, e.Elapsed.Round(time.Millisecond), e.Last)
	}
	return fmt.Sprintf("catalog write was not committed: %s after %d attempts over %s without a leader accepting it (last: %v); check SHOW CLUSTER STATUS for a leader and a quorum, then run it again",
		why, e.Attempts, e.Elapsed.Round(time.Millisecond), e.Last)
}

// Unwrap returns the context's cause and catalog.ErrOutcomeUnknown or
// catalog.ErrTimeout.
func (e *WriteDeadlineError) Unwrap() []error {
	if e.Unknown {
		return []error{e.Cause, catalog.ErrOutcomeUnknown}
	}
	return []error{e.Cause, catalog.ErrTimeout}
}

// commit commits cmd through the local catalog, or through the leader
// (Config.Forward) when this node is not the leader. A forwarded command
// carries the values this node resolved (sampled UTC, chosen authority), so
// the leader commits exactly what a local commit would have.
//
// The write survives leadership changes: cmd gets one request id before
// the first attempt, and an attempt that failed because there was no
// confirmed leader, leadership moved, or the outcome is unknown (a lost
// leadership, a forwarding transport failure) is tried again with backoff,
// through whichever node leads by then, under the same id, so the catalog
// applies it at most once and a retry answers with the first result. It
// gives up when ctx ends or, for a ctx without a deadline, once
// Config.WriteTimeout has passed since the first attempt began (that
// deadline is armed on the node's time source only when a first attempt
// fails, and on every forwarded attempt, so a forwarded first attempt is
// bounded by it too), with a *WriteDeadlineError; every other error
// returns at once.
func (n *Node) commit(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	if n.closed.Load() {
		// Checked before proposing: a closed catalog is not the leader,
		// and a closed node must not forward the write to one.
		return lifecycle.Result{}, ErrClosed
	}
	if cmd.RequestID == "" {
		cmd.RequestID = n.catalog.NewRequestID()
	}
	start := n.csrc.Monotonic()
	backoff := writeBackoffMin
	unknown := false
	for attempt := 1; ; attempt++ {
		res, err := n.commitOnce(ctx, cmd, start)
		if err == nil {
			if n.cfg.OnCommit != nil {
				n.cfg.OnCommit(n.csrc.Monotonic() - start)
			}
			return res, nil
		}
		unknown = unknown || errors.Is(err, catalog.ErrOutcomeUnknown)
		if ctx.Err() != nil {
			return lifecycle.Result{}, &WriteDeadlineError{Attempts: attempt, Elapsed: n.csrc.Monotonic() - start,
				Unknown: unknown, Cause: context.Cause(ctx), Last: err}
		}
		if !retryable(err) || n.closed.Load() {
			return res, err
		}
		if attempt == 1 {
			if _, ok := ctx.Deadline(); !ok {
				var stop func()
				ctx, stop = n.writeDeadline(ctx, n.cfg.WriteTimeout-(n.csrc.Monotonic()-start))
				defer stop()
			}
		}
		n.logger.Debug("catalog write did not commit; retrying", "attempt", attempt, "backoff", backoff, "err", err)
		if !n.wait(ctx, backoff) {
			if n.closed.Load() {
				return res, err
			}
			return lifecycle.Result{}, &WriteDeadlineError{Attempts: attempt, Elapsed: n.csrc.Monotonic() - start,
				Unknown: unknown, Cause: context.Cause(ctx), Last: err}
		}
		backoff = min(2*backoff, writeBackoffMax)
	}
}

// commitOnce is one attempt of commit: locally, or through the leader
// when this node is not the leader and Config.Forward is set. It does not
// wait for an election: with no leader known (or none whose API address is
// registered here) it fails with a catalog.NotLeaderError, which commit
// retries. A forwarded attempt whose ctx has no deadline is bounded by
// what is left of Config.WriteTimeout since start, the write's first
// attempt: a leader that stopped answering (a cut that drops its replies)
// holds it no longer than the write may take in all.
func (n *Node) commitOnce(ctx context.Context, cmd lifecycle.Command, start time.Duration) (lifecycle.Result, error) {
	res, err := n.catalog.Propose(ctx, cmd)
	if err == nil || n.cfg.Forward == nil || !errors.Is(err, catalog.ErrNotLeader) {
		return res, err
	}
	leader, ok := n.catalog.Leader()
	switch {
	case ok && leader.ServerID == n.catalog.ServerID():
		return n.catalog.Propose(ctx, cmd) // it became the leader meanwhile
	case !ok || leader.APIAddr == "":
		return lifecycle.Result{}, &catalog.NotLeaderError{Leader: leader.ServerID, LeaderAddress: leader.RaftAddr}
	}
	if _, ok := ctx.Deadline(); !ok {
		var stop func()
		ctx, stop = n.writeDeadline(ctx, n.cfg.WriteTimeout-(n.csrc.Monotonic()-start))
		defer stop()
	}
	return n.cfg.Forward(ctx, leader, cmd)
}

// retryable reports whether a write that failed with err may succeed when
// tried again under the same request id: nothing was proposed for want of
// a confirmed leader, or the outcome is unknown (which the request id makes
// safe to retry). A halted catalog, a refused command and a closed node are
// final.
func retryable(err error) bool {
	switch {
	case errors.Is(err, catalog.ErrHalted), errors.Is(err, lifecycle.ErrInvalidCommand):
		return false
	case errors.Is(err, catalog.ErrNotLeader), errors.Is(err, catalog.ErrLeadershipUnconfirmed),
		errors.Is(err, catalog.ErrOutcomeUnknown), errors.Is(err, catalog.ErrTimeout):
		return true
	}
	return false
}

// writeDeadline returns ctx cancelled, with cause context.DeadlineExceeded,
// after d on the node's consensus time source, and the function that
// releases it.
func (n *Node) writeDeadline(ctx context.Context, d time.Duration) (context.Context, func()) {
	return timesource.WithTimeout(ctx, n.csrc, d)
}

// wait waits d on the node's consensus time source; false when ctx ends or
// the node closes first.
func (n *Node) wait(ctx context.Context, d time.Duration) bool {
	return timesource.Sleep(ctx, n.csrc, d, n.done)
}

// AdvertisedRevision returns the runtime revision this node advertises to
// a clock authority: the catalog revision whose domain clocks, authority
// fences included, it has installed; 0 until the node installed the
// committed domains since it started. Every committed revision installs all
// domain lifecycles at once, in commit order, so once a revision is
// installed every domain clock the node holds equals that revision's
// committed lifecycle; it is advertised once the producers it retires
// have exited too (Installed).
func (n *Node) AdvertisedRevision() uint64 {
	_, rev, _ := n.Installed()
	return rev
}
