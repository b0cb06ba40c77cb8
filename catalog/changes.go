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
// (the initial state when nothing was applied yet).
func (f *changeFeed) subscribe() *Subscription { return f.subscribeWhen(nil) }

// subscribeWhen is subscribe for a subscriber that needs only the changes
// wants reports true for (and every restore): the others are not offered,
// so they do not wake it. wants runs on the apply goroutine for every
// change and must be fast and must not block; nil wants every change.
func (f *changeFeed) subscribeWhen(wants func(Change) bool) *Subscription {
	s := &Subscription{feed: f, ch: make(chan Change, 1), wants: wants}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(s.ch)
		return s
	}
	s.offerLocked(f.last)
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
		c.Restored = c.Restored || old.Restored
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
