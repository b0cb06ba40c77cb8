package cluster

import (
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// DefaultUnavailabilityInterval is how long an application-health
// observation stays fresh: within it, a node's latest health verdict
// overrides gossip (raft's heartbeat observations); past it, gossip decides.
const DefaultUnavailabilityInterval = time.Second

// Availability is a node's view of which registered node incarnations are
// effectively available, the Config.Available a cluster member passes. It
// merges two signals:
//
//   - gossip: the leader's raft heartbeats to each server (HeartbeatFailed /
//     HeartbeatResumed), keyed by node name; a node never observed is live;
//   - application health: the outcome of a probe of the node's status
//     endpoint after its bounded attempts, with the incarnation the node
//     answered with and when.
//
// The rule (domain-clock spec, "Authority Selection And Reconciliation"):
// while a node's latest health observation is fresh (younger than the
// unavailability interval), it decides: an unhealthy verdict makes the node
// unavailable, a healthy one keeps it available through a gossip loss, but
// only for the incarnation that answered, so a restarted process never
// revives its predecessor. Once the observation is stale the node follows
// gossip. Duplicate observations of one name collapse to the newest
// registered incarnation (lifecycle.Candidates does the same again).
//
// Availability is safe for concurrent use; Available never blocks on I/O.
// Every change of the verdict of some node calls OnChange.
type Availability struct {
	src      timesource.Source
	interval time.Duration
	onChange func()

	mu     sync.Mutex
	gossip map[string]bool // node name → live; absent is live
	health map[string]healthObservation
	self   string
}

type healthObservation struct {
	incarnation uint64
	healthy     bool
	at          time.Duration // src.Monotonic() when observed
}

// NewAvailability returns a view in which every registered node is live.
// self is this process's node name, always available to itself. interval
// zero means DefaultUnavailabilityInterval. onChange (may be nil) is called,
// without a lock held, after every observation that may change the
// verdict; it must not block.
func NewAvailability(src timesource.Source, self string, interval time.Duration, onChange func()) *Availability {
	if interval <= 0 {
		interval = DefaultUnavailabilityInterval
	}
	if onChange == nil {
		onChange = func() {}
	}
	return &Availability{src: src, interval: interval, onChange: onChange, self: self,
		gossip: make(map[string]bool), health: make(map[string]healthObservation)}
}

// Interval returns the unavailability interval.
func (a *Availability) Interval() time.Duration { return a.interval }

// ObserveGossip records gossip's liveness verdict for the node name.
func (a *Availability) ObserveGossip(name string, live bool) {
	a.mu.Lock()
	prev, seen := a.gossip[name]
	a.gossip[name] = live
	a.mu.Unlock()
	if !seen && !live || seen && prev != live {
		a.onChange()
	}
}

// ObserveHealth records the outcome of one health probe of the node name,
// after its bounded attempts: healthy with the incarnation that answered,
// or unhealthy (incarnation 0).
func (a *Availability) ObserveHealth(name string, incarnation uint64, healthy bool) {
	now := a.src.Monotonic()
	a.mu.Lock()
	prev, seen := a.health[name]
	a.health[name] = healthObservation{incarnation: incarnation, healthy: healthy, at: now}
	a.mu.Unlock()
	if !seen || prev.healthy != healthy || prev.incarnation != incarnation {
		a.onChange()
	}
}

// Forget drops every observation of the node name (it left the cluster).
func (a *Availability) Forget(name string) {
	a.mu.Lock()
	delete(a.gossip, name)
	delete(a.health, name)
	a.mu.Unlock()
	a.onChange()
}

// Live reports the effective availability of one registered incarnation.
func (a *Availability) Live(n lifecycle.NodeIncarnation) bool {
	now := a.src.Monotonic()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.liveLocked(n, now)
}

func (a *Availability) liveLocked(n lifecycle.NodeIncarnation, now time.Duration) bool {
	if n.Node == a.self {
		return true
	}
	if h, ok := a.health[n.Node]; ok && now-h.at < a.interval {
		return h.healthy && h.incarnation == n.Incarnation
	}
	live, seen := a.gossip[n.Node]
	return !seen || live
}

// Available returns the effectively available incarnations among s's
// registered nodes: the Config.Available of a cluster member.
func (a *Availability) Available(s *lifecycle.State) []lifecycle.NodeIncarnation {
	now := a.src.Monotonic()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []lifecycle.NodeIncarnation
	for _, n := range s.Incarnations() {
		if a.liveLocked(n, now) {
			out = append(out, n)
		}
	}
	return out
}

// StaleAfter returns how long until the first fresh health observation
// goes stale, that is the oldest one still within the unavailability
// interval (zero when none is fresh): a caller that must re-evaluate when
// an observation lapses arms a timer for it.
func (a *Availability) StaleAfter() time.Duration {
	now := a.src.Monotonic()
	a.mu.Lock()
	defer a.mu.Unlock()
	var next time.Duration
	for _, h := range a.health {
		if left := a.interval - (now - h.at); left > 0 && (next == 0 || left < next) {
			next = left
		}
	}
	return next
}
