package follow

import (
	"context"
	"iter"
	"sync"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// Tick is an accepted tick: generation, one-based id, logical boundary and
// the authority's UTC observation.
type Tick = wire.Tick

// Clock is a followed domain clock as the session last received it: the
// observed clock of the attach reply or the newest state frame, and the
// newest tick of that clock's generation.
//
// Its methods (clocktime.go) are the client-side arithmetic of package
// clock in Go's types, exactly what a node projects: logical time rounds
// down, waits round up. They use the caller's UTC, so a host whose UTC is
// offset from the cluster's projects shifted instants (the offset times the
// rate); Reading is the serving node's own reading to anchor on instead.
type Clock struct {
	// Domain is the followed domain.
	Domain string
	// Observed is the observed clock: generation, state and, when paced,
	// period, skew and mapping.
	Observed clock.Observed
	// Tick is the newest received tick of Observed's generation; its ID is
	// 0 when none arrived since the clock became paced.
	Tick Tick
	// Reading is the serving node's logical reading taken when Tick's
	// frame was built.
	Reading int64
	// Failure is the typed report of Observed's generation failing at its
	// authority, nil while none was received. No tick of that generation
	// follows it; it holds until a state of another generation.
	Failure *wire.ClockFailure
	// Interruption is the serving node's report that it cannot vouch for
	// the clock (code clock_interrupted), nil unless the last frame of the
	// clock was an interrupted frame: the next state or tick clears it.
	Interruption *wire.ClockFailure
}

// TickAdvances reports whether t is newer than last: a later generation, or
// a higher id in the same one. A follow delivers a tick only when it
// advances, so a tick delivered anew (a clock attached again after a lost
// connection) is neither an event nor counted twice.
func TickAdvances(last, t Tick) bool {
	return t.Generation > last.Generation || t.Generation == last.Generation && t.ID > last.ID
}

// EventKind says what a clock event reports.
type EventKind uint8

// Event kinds.
const (
	// EventState: the followed clock changed (a new generation, a stop,
	// an uninstalled or re-installed mapping).
	EventState EventKind = iota + 1
	// EventTick: a newer tick of the followed clock's generation.
	EventTick
	// EventEnd: the attachment ended (Reason says why); the session no
	// longer follows the domain, unless the end only interrupted the
	// attachment (Follow.Interrupted).
	EventEnd
	// EventError: the followed clock's generation failed at its authority
	// (Failure says how); the clock stays followed, but no tick of that
	// generation follows.
	EventError
	// EventInterrupted: the serving node cannot vouch for the followed
	// clock (Failure says why, code clock_interrupted); the clock stays
	// followed, and its next state or tick event resumes it.
	EventInterrupted
)

// String returns "state", "tick", "end", "error" or "interrupted".
func (k EventKind) String() string {
	switch k {
	case EventState:
		return "state"
	case EventTick:
		return "tick"
	case EventEnd:
		return "end"
	case EventError:
		return "error"
	case EventInterrupted:
		return "interrupted"
	default:
		return "event"
	}
}

// ClockEvent is one coalesced observation of a followed clock. Clock is the
// followed clock as it stood when the event was received: for a state event
// its new observation, for a tick event the observation with that tick, for
// an end event the last clock the attachment held.
type ClockEvent struct {
	// Domain is the followed domain the event is about.
	Domain string
	// Attachment numbers the attachment whose frame the event reports
	// within its session, as the attach reply did.
	Attachment uint64
	// Kind says whether the clock changed, ticked or ended.
	Kind EventKind
	// Clock is the followed clock after this event.
	Clock Clock
	// Reason says why the attachment ended; it is wire.ReasonNone
	// unless Kind is EventEnd.
	Reason wire.EndReason
	// Failure is the typed failure of an error event (it matches the
	// failure's sentinel with errors.Is), or the interruption of an
	// interrupted event; nil unless Kind is EventError or EventInterrupted.
	Failure *wire.ClockFailure
}

// Frame returns the frame the event reports, as the session delivered it:
// a state frame with the observed clock, a tick frame with the tick and the
// node's reading, an end frame with its reason, or an error frame with its
// failure. Programs that print frames (nspl clock --format json) render
// events through it.
func (ev ClockEvent) Frame() wire.Frame {
	f := wire.Frame{Domain: ev.Domain, Attachment: ev.Attachment}
	switch ev.Kind {
	case EventState:
		f.Kind, f.Clock = wire.FrameState, ev.Clock.Observed
	case EventTick:
		f.Kind, f.Tick, f.Reading = wire.FrameTick, ev.Clock.Tick, ev.Clock.Reading
	case EventEnd:
		f.Kind, f.Reason = wire.FrameEnd, ev.Reason
	case EventError:
		f.Kind = wire.FrameError
		if ev.Failure != nil {
			f.Failure = *ev.Failure
		}
	case EventInterrupted:
		f.Kind = wire.FrameInterrupted
		if ev.Failure != nil {
			f.Failure = *ev.Failure
		}
	}
	return f
}

// Follow is the coalescing follow of a session's clocks: the followed clock
// of each attached domain (the attach reply's observation or the newest
// state, the newest tick of its generation and its failure) and the unread
// events, coalesced per domain to at most one state, one tick, one error and
// one end, however
// slowly the caller reads. Its owner records each attach reply (Attached)
// and each release (Released) before the frames that follow them, feeds
// every frame it receives (Apply) and reports an end that interrupts the
// attachment without ending the following (Interrupted). Its methods are safe for concurrent use.
type Follow struct {
	closedErr error

	mu      sync.Mutex
	live    Attachments
	clocks  map[string]*Clock
	pending map[string]*pendingEvents
	queue   []string      // domains with unread events, oldest first
	ready   chan struct{} // created by a waiter, closed by the next event
	closed  bool
}

// NewFollow returns an empty follow whose NextEvent returns closedErr once
// it is closed.
func NewFollow(closedErr error) *Follow {
	return &Follow{closedErr: closedErr, clocks: make(map[string]*Clock), pending: make(map[string]*pendingEvents)}
}

// Attached records an attach reply: the domain is followed as attachment
// with the observed clock, replacing an ended attachment and its unread
// events.
func (f *Follow) Attached(domain string, attachment uint64, observed clock.Observed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropPendingLocked(domain)
	f.live.Attached(domain, attachment)
	f.clocks[domain] = &Clock{Domain: domain, Observed: observed}
}

// Reattached records the attach reply of a clock attached again after its
// attachment was interrupted (a lost transport): the domain stays followed
// under the new attachment number and the reply's observation is applied as
// a state. The newest tick is kept while the generation and state are
// unchanged, so a tick received before the interruption and delivered anew
// is not an event twice.
func (f *Follow) Reattached(domain string, attachment uint64, observed clock.Observed) {
	f.mu.Lock()
	if f.clocks[domain] == nil {
		f.clocks[domain] = &Clock{Domain: domain, Observed: observed}
	}
	f.live.Attached(domain, attachment)
	f.mu.Unlock()
	f.Apply(wire.Frame{Domain: domain, Attachment: attachment, Kind: wire.FrameState, Clock: observed})
}

// Released stops following domain and drops its unread events.
func (f *Follow) Released(domain string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live.Released(domain)
	delete(f.clocks, domain)
	f.dropPendingLocked(domain)
	if p := f.pending[domain]; p != nil && !p.queued {
		delete(f.pending, domain)
	}
}

// Clock returns the followed clock of domain, a name as NSPL takes it:
// case-insensitive, bare or backtick-quoted. It reports false when the
// domain is not followed or the name is not a domain name.
func (f *Follow) Clock(domain string) (Clock, bool) {
	name, err := grammar.ParseName(domain)
	if err != nil {
		return Clock{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clocks[name]
	if c == nil {
		return Clock{}, false
	}
	return *c, true
}

// Apply folds a received frame into the followed clock and the unread
// events. A frame of an attachment not followed is dropped, and so is a tick
// of another generation or no newer than the followed clock's.
func (f *Follow) Apply(fr wire.Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live.Admits(fr) {
		return // a frame of an attachment already released
	}
	c := f.clocks[fr.Domain]
	head := f.pendingLocked(fr.Domain)
	p := head.tail(fr.Kind)
	switch fr.Kind {
	case wire.FrameState:
		if fr.Clock.Generation != c.Observed.Generation || fr.Clock.State != c.Observed.State {
			c.Tick, c.Reading = Tick{}, 0
		}
		if fr.Clock.Generation != c.Observed.Generation {
			c.Failure = nil
		}
		c.Observed = fr.Clock
		c.Interruption = nil
		// The unread tick and error came before this state: drop them
		// with the older state (the clock keeps a failure of its
		// generation).
		p.tick, p.err = ClockEvent{}, ClockEvent{}
		p.state = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventState, Clock: *c}
	case wire.FrameTick:
		if fr.Tick.Generation != c.Observed.Generation || !TickAdvances(c.Tick, fr.Tick) {
			return
		}
		c.Tick, c.Reading = fr.Tick, fr.Reading
		c.Interruption = nil
		p.tick = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventTick, Clock: *c}
	case wire.FrameError:
		if fr.Failure.Generation != c.Observed.Generation || c.Failure != nil && *c.Failure == fr.Failure {
			// Another generation's, or delivered anew to a clock
			// attached again: not an event twice.
			return
		}
		failure := fr.Failure
		c.Failure = &failure
		p.err = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventError, Clock: *c, Failure: &failure}
	case wire.FrameInterrupted:
		if c.Interruption != nil {
			return // reported already: not an event twice
		}
		interruption := fr.Failure
		c.Interruption = &interruption
		p.err = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventInterrupted, Clock: *c, Failure: &interruption}
	case wire.FrameEnd:
		delete(f.clocks, fr.Domain)
		p.state, p.tick, p.err = ClockEvent{}, ClockEvent{}, ClockEvent{}
		p.end = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventEnd, Clock: *c, Reason: fr.Reason}
	default:
		return
	}
	f.queueLocked(fr.Domain, head)
}

// Interrupted records an end frame that interrupts an attachment without
// ending the following (a node draining for shutdown ends its sessions'
// attachments with reason wire.NodeShutdown, and the clock is attached
// again on the next session): the end is an event, replacing the unread
// state and tick before it, but the domain stays followed with its clock,
// and the events of the attachment Reattached records come after it. Until
// then the interrupted attachment stays recorded, so an end its owner
// reports for it on its own (a restoration refused as not found) still
// ends the following.
func (f *Follow) Interrupted(fr wire.Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fr.Kind != wire.FrameEnd || !f.live.Admits(fr) {
		return
	}
	f.live.Attached(fr.Domain, fr.Attachment)
	head := f.pendingLocked(fr.Domain)
	p := head.tail(fr.Kind)
	p.state, p.tick = ClockEvent{}, ClockEvent{}
	p.end = ClockEvent{Domain: fr.Domain, Attachment: fr.Attachment, Kind: EventEnd, Clock: *f.clocks[fr.Domain], Reason: fr.Reason}
	f.queueLocked(fr.Domain, head)
}

// Pending returns the number of unread events.
func (f *Follow) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.pending {
		for ; p != nil; p = p.after {
			for _, ev := range []*ClockEvent{&p.state, &p.tick, &p.err, &p.end} {
				if ev.Kind != 0 {
					n++
				}
			}
		}
	}
	return n
}

// pendingLocked returns the unread events of domain, adding an empty entry.
func (f *Follow) pendingLocked(domain string) *pendingEvents {
	p := f.pending[domain]
	if p == nil {
		p = &pendingEvents{}
		f.pending[domain] = p
	}
	return p
}

// queueLocked puts domain, whose unread events head holds, in the event
// order and wakes a waiter.
func (f *Follow) queueLocked(domain string, head *pendingEvents) {
	if !head.queued {
		head.queued = true
		f.queue = append(f.queue, domain)
	}
	if f.ready != nil {
		close(f.ready)
		f.ready = nil
	}
}

// NextEvent returns the oldest unread clock event, waiting until one
// arrives, ctx ends or the follow closes. Events of one domain come in the
// order received, coalesced; events of different domains in the order their
// domains first had unread events.
func (f *Follow) NextEvent(ctx context.Context) (ClockEvent, error) {
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return ClockEvent{}, f.closedErr
		}
		for len(f.queue) > 0 {
			d := f.queue[0]
			p := f.pending[d]
			ev, ok := p.take()
			switch {
			case p.empty() && p.after != nil:
				// The events of the next attachment follow an
				// interruption's end.
				p.after.queued = true
				f.pending[d] = p.after
			case p.empty():
				p.queued = false
				f.queue = f.queue[1:]
				if f.clocks[d] == nil {
					delete(f.pending, d)
				} // else kept for the domain's next event: a tick allocates nothing
			}
			if ok {
				f.mu.Unlock()
				return ev, nil
			}
		}
		if f.ready == nil {
			f.ready = make(chan struct{})
		}
		ready := f.ready
		f.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return ClockEvent{}, ctx.Err()
		}
	}
}

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the follow closes.
func (f *Follow) Events(ctx context.Context) iter.Seq[ClockEvent] {
	return func(yield func(ClockEvent) bool) {
		for {
			ev, err := f.NextEvent(ctx)
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Close wakes every waiter; NextEvent returns the closed error from then
// on. It is idempotent.
func (f *Follow) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	if f.ready != nil {
		close(f.ready)
		f.ready = nil
	}
}

func (f *Follow) dropPendingLocked(domain string) {
	p := f.pending[domain]
	if p == nil {
		return
	}
	p.state, p.tick, p.err, p.end, p.after = ClockEvent{}, ClockEvent{}, ClockEvent{}, ClockEvent{}, nil
}

// pendingEvents holds one domain's unread events: at most one state, one
// tick (always received after that state), one error (received after both)
// and one end, which replaces them all. An empty slot has the zero Kind;
// slots are values, so a tick replacing an unread one allocates nothing.
type pendingEvents struct {
	state, tick, err, end ClockEvent
	queued                bool // the domain is in the follow's event order
	// after holds the events of the attachment that resumed the following
	// after an interruption's unread end (Interrupted).
	after *pendingEvents
}

// tail returns the entry an event of kind goes to: the last one, or a new
// one after it when that holds an end and the event is no end, or an
// interruption and the event is a state or tick that resumes the clock
// (so the resumption is read after the interruption, not before it).
func (p *pendingEvents) tail(kind wire.FrameKind) *pendingEvents {
	for p.after != nil {
		p = p.after
	}
	if p.end.Kind != 0 && kind != wire.FrameEnd ||
		p.err.Kind == EventInterrupted && (kind == wire.FrameState || kind == wire.FrameTick) {
		p.after = &pendingEvents{}
		p = p.after
	}
	return p
}

func (p *pendingEvents) empty() bool {
	return p.state.Kind == 0 && p.tick.Kind == 0 && p.err.Kind == 0 && p.end.Kind == 0
}

// take removes and returns the oldest unread event.
func (p *pendingEvents) take() (ClockEvent, bool) {
	for _, slot := range []*ClockEvent{&p.state, &p.tick, &p.err, &p.end} {
		if slot.Kind != 0 {
			ev := *slot
			*slot = ClockEvent{}
			return ev, true
		}
	}
	return ClockEvent{}, false
}
