package catalog

import (
	"sync"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Change is one applied change of the catalog: the state after a batch of
// committed commands that advanced the revision, or after a snapshot
// restore replaced the whole state.
type Change struct {
	// Revision is the catalog revision of State.
	Revision uint64
	// State is the complete catalog after the change. It is shared and
	// read-only: never call Apply on it.
	State *lifecycle.State
	// Restored is set when a snapshot restore replaced the whole state;
	// anything derived from earlier changes must be rebuilt from State.
	Restored bool
	// Domains names the domains the change created, changed or dropped
	// (lifecycle.Command.DomainsChanged of each command that changed the
	// state), in commit order, perhaps more than once; no other domain's
	// record differs from the previous change's. It is shared and
	// read-only. It means nothing when Whole reports true.
	Domains []string
	// All is set when Domains does not list the change although it is no
	// restore: the first change a subscription holds, and a subscription's
	// coalesced changes that named more than maxCoalescedDomains domains.
	All bool
}

// Whole reports whether c does not say which domains changed (a snapshot
// restore, or All): whatever is derived from the domains must then be
// rebuilt from the whole of State.
func (c Change) Whole() bool { return c.Restored || c.All }

// maxCoalescedDomains bounds the names a subscription's pending change
// accumulates while its reader is slow; past it the change says All, so
// coalescing keeps a bounded slot and a reader that fell far behind does
// one whole pass instead of reading a long list.
const maxCoalescedDomains = 1024

// merge returns c as the successor of the unread change old it replaces:
// a restore is never coalesced away, and the domains both name stay named.
func (c Change) merge(old Change) Change {
	c.Restored = c.Restored || old.Restored
	if c.Restored {
		c.Domains = nil
		return c
	}
	c.All = c.All || old.All || len(old.Domains)+len(c.Domains) > maxCoalescedDomains
	if c.All {
		c.Domains = nil
		return c
	}
	if len(old.Domains) > 0 {
		c.Domains = append(append(make([]string, 0, len(old.Domains)+len(c.Domains)), old.Domains...), c.Domains...)
	}
	return c
}

// changeFeed delivers changes to the synchronous hook and to coalescing
// subscriptions. publish is called by the FSM in commit order only.
type changeFeed struct {
	hook func(Change)

	mu     sync.Mutex
	last   Change
	subs   map[*Subscription]struct{}
	closed bool
}

// newChangeFeed returns a feed whose subscribers start from initial.
func newChangeFeed(hook func(Change), initial Change) *changeFeed {
	return &changeFeed{hook: hook, last: initial, subs: map[*Subscription]struct{}{}}
}

// publish runs the hook, then offers c to every subscription. It never
// blocks on a subscriber: each holds at most the newest change.
func (f *changeFeed) publish(c Change) {
	if f.hook != nil {
		f.hook(c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = c
	for s := range f.subs {
		if s.wants == nil || c.Restored || s.wants(c) {
			s.offerLocked(c)
		}
	}
}

// subscribe registers a subscription that first holds the latest change
// (the initial state when nothing was applied yet), with All set.
func (f *changeFeed) subscribe() *Subscription { return f.subscribeWhen(nil) }

// subscribeWhen is subscribe for a subscriber that needs only the changes
// wants reports true for (and every restore): the others are not offered,
// so they do not wake it, and their domains are not carried into the next
// change it is offered. wants runs on the apply goroutine for every
// change and must be fast and must not block; nil wants every change.
func (f *changeFeed) subscribeWhen(wants func(Change) bool) *Subscription {
	s := &Subscription{feed: f, ch: make(chan Change, 1), wants: wants}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(s.ch)
		return s
	}
	// A new subscriber saw none of the changes before: its first change
	// is the whole state.
	first := f.last
	first.All, first.Domains = true, nil
	s.offerLocked(first)
	f.subs[s] = struct{}{}
	return s
}

// close ends every subscription.
func (f *changeFeed) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	for s := range f.subs {
		close(s.ch)
		delete(f.subs, s)
	}
}

// Subscription follows catalog changes with a one-slot, replace-when-slow
// policy, like time.Ticker: its channel holds at most the newest Change, so
// a slow subscriber never stalls raft and never reads an older change after
// a newer one, but may skip intermediate revisions. A change with Restored
// set is never coalesced away: when a restore is replaced by a later change
// before the subscriber reads it, the later change carries Restored too.
// Nor are the domains of a skipped change: the change that replaces it
// names them as well (Change.Domains), or says All.
type Subscription struct {
	feed  *changeFeed
	ch    chan Change
	wants func(Change) bool // nil: every change
}

// C returns the channel of changes. It is closed by Close and when the node
// closes.
func (s *Subscription) C() <-chan Change { return s.ch }

// offerLocked replaces any unread change with c. Only the feed sends on
// s.ch and it holds f.mu, so after draining the send cannot block.
func (s *Subscription) offerLocked(c Change) {
	select {
	case old := <-s.ch:
		c = c.merge(old)
	default:
	}
	s.ch <- c
}

// Close ends the subscription and closes its channel. It is safe to call
// more than once and concurrently with delivery.
func (s *Subscription) Close() {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[s]; ok {
		delete(f.subs, s)
		close(s.ch)
	}
}
