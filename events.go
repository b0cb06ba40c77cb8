package nspl

import "github.com/nspl-dev/nspl/session"

// EventKind says what a clock event reports (see session.EventKind).
type EventKind = session.EventKind

// Event kinds.
const (
	// EventState: the followed clock changed.
	EventState = session.EventState
	// EventTick: a newer tick of the followed clock's generation.
	EventTick = session.EventTick
	// EventEnd: the attachment ended; the session no longer follows the
	// domain.
	EventEnd = session.EventEnd
	// EventError: the followed clock's generation failed at its authority;
	// ClockEvent.Failure is the typed report.
	EventError = session.EventError
	// EventInterrupted: the serving node cannot vouch for the followed
	// clock (it lost the cluster's leader); ClockEvent.Failure says why,
	// and the next state or tick event resumes it.
	EventInterrupted = session.EventInterrupted
)

// ClockEvent is one coalesced observation of a followed clock (see
// session.ClockEvent). Its Domain is the stored, lower-case name.
type ClockEvent = session.ClockEvent
