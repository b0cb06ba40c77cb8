package catalog

import (
	"time"

	"github.com/nspl-dev/nspl/lifecycle"
)

// DefaultAuthorityLease is how long a cluster member keeps producing ticks
// after it last heard from a consensus leader, with the default timing:
// one and a half election timeouts (authorityLeaseFor). A follower whose
// leader is healthy hears from it every tenth of a heartbeat timeout, so
// only a cut, or a stall longer than the one that starts an election, lets
// it lapse; and it is short, because a dead leader's clocks move
// FenceWait, about this long, after its successor is elected.
const DefaultAuthorityLease = DefaultElectionTimeout + DefaultElectionTimeout/2

// authorityLeaseFor is the authority lease of a member whose
// ClusterConfig leaves it zero: one and a half election timeouts.
func authorityLeaseFor(election time.Duration) time.Duration {
	return election + election/2
}

// ContactPolls is how many times per authority lease a member samples its
// contact with the leader (Contact). A contact is seen at most one sample
// period after it happened, so the lease can end up to Lease/ContactPolls
// late.
const ContactPolls = 8

// FenceWait is how long a leader waits, after it first finds a domain's
// authority ineligible in its term, before it commits a reassignment that
// moves the domain away from it: the lease and the lease's sampling period.
// By then the lost authority has stopped producing, so no two nodes produce
// ticks for one generation at once:
//
//   - a node renews its lease only from a contact it had (an append or
//     heartbeat of a leader, or being the leader), and stops producing once
//     the lease has run from the sample before that contact;
//   - a follower of this leader heard from it last before the leader saw
//     it go (its heartbeats to it failed, or its probes did);
//   - a node that followed, or was, the leader of an earlier term had its
//     last renewal from that leader before this leader's election: raft
//     grants a vote (and a pre-vote) only to a candidate when the voter has
//     no leader, which takes a heartbeat timeout without contact, and a
//     leader that lost its quorum steps down within the leader lease
//     timeout, which is at most the heartbeat timeout (ClusterConfig
//     checks). The old leader therefore stopped believing it leads, and
//     stopped renewing anyone, by the time a majority had elected this one;
//     the leader loop sees the authority ineligible only after that.
//
// It is the cost a handover pays for the fence: a follower of a moved clock
// sees a gap of the loss's detection plus FenceWait. After a leader's
// death the detection is the election: one to two heartbeat timeouts.
func FenceWait(lease time.Duration) time.Duration {
	return lease + lease/ContactPolls
}

// AuthorityLease returns the member's authority lease, zero for an
// embedded node (it is its own leader and never loses contact).
func (n *Replica) AuthorityLease() time.Duration {
	if n.cfg.Cluster == nil {
		return 0
	}
	return n.cfg.Cluster.AuthorityLease
}

// fenceWait returns FenceWait of the member's configuration, zero for an
// embedded node.
func (n *Replica) fenceWait() time.Duration {
	cc := n.cfg.Cluster
	if cc == nil {
		return 0
	}
	return FenceWait(cc.AuthorityLease)
}

// fences is the leader loop's record, for the term it leads, of when it
// first found each authority it would move away from ineligible. It is
// owned by the loop goroutine.
type fences struct {
	term  uint64
	since map[lifecycle.Identity]time.Duration // monotonic
	// soonest is the least time left of a wait due reported in the
	// current pass (zero: none waits); the loop retries no later than it.
	soonest time.Duration
}

// due reports whether a reassignment cmd may commit now (at monotonic
// now, in term): it names no previous authority, or that authority has
// been ineligible for at least wait in this term. It records the first
// sighting.
func (f *fences) due(term uint64, now, wait time.Duration, cmd lifecycle.Command) (bool, time.Duration) {
	if f.term != term || f.since == nil {
		*f = fences{term: term, since: make(map[lifecycle.Identity]time.Duration)}
	}
	ra := cmd.ReassignAuthority
	if ra == nil || ra.ExpectedFence.Node == "" || wait <= 0 {
		return true, 0
	}
	id := lifecycle.Identity{Node: ra.ExpectedFence.Node, Incarnation: ra.ExpectedFence.Incarnation}
	at, ok := f.since[id]
	if !ok {
		f.since[id], at = now, now
	}
	if left := wait - (now - at); left > 0 {
		if f.soonest == 0 || left < f.soonest {
			f.soonest = left
		}
		return false, left
	}
	return true, 0
}

// forget drops the sightings of authorities that are no longer pending a
// move (eligible again, or moved): a later loss waits in full.
func (f *fences) forget(pending map[lifecycle.Identity]bool) {
	for id := range f.since {
		if !pending[id] {
			delete(f.since, id)
		}
	}
}

// retryWait is how long the leader loop waits before its next pass after
// one that did not commit everything: RetryInterval, or less when a
// reassignment's fence wait ends sooner (left, zero when none waits), so
// the move commits as the wait ends rather than up to a retry later.
func retryWait(left time.Duration) time.Duration {
	if left > 0 && left < RetryInterval {
		return left
	}
	return RetryInterval
}
