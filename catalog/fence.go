package catalog

import (
	"time"

	"github.com/nspl-dev/nspl/lifecycle"
)

// DefaultAuthorityLease is how long a cluster member keeps producing ticks
// after it last heard from a consensus leader. It is twice the election
// timeout: a follower whose leader is healthy hears from it every tenth of
// a heartbeat timeout, so only a cut (or a stall long enough to start an
// election) lets it lapse.
const DefaultAuthorityLease = 2 * DefaultElectionTimeout

// ContactPolls is how many times per authority lease a member samples its
// contact with the leader (Contact). A contact is seen at most one sample
// period after it happened, so the lease can end up to Lease/ContactPolls
// late.
const ContactPolls = 8

// FenceWait is how long a leader waits, after it first finds a domain's
// authority ineligible in its term, before it commits a reassignment that
// moves the domain away from it: the lease, the lease's sampling period,
// and raft's leader lease (a cut-off leader still believes itself leader,
// and so vouches for its own clocks, for up to that long). The authority
// heard from a leader last before the leader saw it go, so by then it has
// stopped producing, and no two nodes produce ticks for one generation at
// once. It is the cost a handover pays for that: the gap a follower of a
// moved clock sees is the loss's detection plus FenceWait plus one retry
// interval.
func FenceWait(lease, leaderLease time.Duration) time.Duration {
	return lease + lease/ContactPolls + leaderLease
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
	return FenceWait(cc.AuthorityLease, cc.LeaderLeaseTimeout)
}

// fences is the leader loop's record, for the term it leads, of when it
// first found each authority it would move away from ineligible. It is
// owned by the loop goroutine.
type fences struct {
	term  uint64
	since map[lifecycle.Identity]time.Duration // monotonic
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
