package nspl

import "github.com/nspl-dev/nspl/follow"

// EventKind says what a clock event reports (see follow.EventKind).
type EventKind = follow.EventKind

// Event kinds.
const (
	// EventState: the followed clock changed.
	EventState = follow.EventState
	// EventTick: a newer tick of the followed clock's generation.
	EventTick = follow.EventTick
	// EventEnd: the attachment ended; the session no longer follows the
	// domain.
	EventEnd = follow.EventEnd
	// EventError: the followed clock's generation failed at its authority;
	// ClockEvent.Failure is the typed report.
	EventError = follow.EventError
	// EventInterrupted: the serving node cannot vouch for the followed
	// clock (it lost the cluster's leader); ClockEvent.Failure says why,
	// and the next state or tick event resumes it.
	EventInterrupted = follow.EventInterrupted
)

// ClockEvent is one coalesced observation of a followed clock (see
// follow.ClockEvent). Its Domain is the stored, lower-case name.
type ClockEvent = follow.ClockEvent
