package nspl

import (
	"github.com/nspl-dev/nspl/wire"
)

// EventKind says what a clock event reports.
type EventKind uint8

// Event kinds.
const (
	// EventState: the followed clock changed (a new generation, a stop,
	// an uninstalled or re-installed mapping).
	EventState EventKind = iota + 1
	// EventTick: a newer tick of the followed clock's generation.
	EventTick
	// EventEnd: the attachment ended; the session no longer follows the
	// domain (Reason says why).
	EventEnd
)

// String returns "state", "tick" or "end".
func (k EventKind) String() string {
	switch k {
	case EventState:
		return "state"
	case EventTick:
		return "tick"
	case EventEnd:
		return "end"
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
	// Kind says whether the clock changed, ticked or ended.
	Kind EventKind
	// Clock is the followed clock after this event.
	Clock Clock
	// Reason says why the attachment ended; it is wire.ReasonNone
	// unless Kind is EventEnd.
	Reason wire.EndReason
}

// pendingEvents holds one domain's unread events: at most one state, one
// tick (always received after that state) and one end, which replaces both.
type pendingEvents struct {
	state, tick, end *ClockEvent
	queued           bool // the domain is in the session's event order
}

func (p *pendingEvents) empty() bool { return p.state == nil && p.tick == nil && p.end == nil }

// take removes and returns the oldest unread event.
func (p *pendingEvents) take() (ClockEvent, bool) {
	for _, slot := range []**ClockEvent{&p.state, &p.tick, &p.end} {
		if *slot != nil {
			ev := **slot
			*slot = nil
			return ev, true
		}
	}
	return ClockEvent{}, false
}
