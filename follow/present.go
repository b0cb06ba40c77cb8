package follow

import (
	"strconv"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// The JSON renderings of wire's values and result sets as operators read
// them, and the shell's line for a clock event. A value's and a frame's
// plain text are their String methods (wire.Value.String,
// wire.Frame.String), which print through package literal.

// AppendValueJSON appends v as a JSON value: text, durations and timestamps as
// strings in their plain-text form, integers and rates as numbers, null as
// null. Every uint64 is written exactly; readers that decode numbers into
// float64 lose precision above 2^53.
func AppendValueJSON(b []byte, v wire.Value) []byte {
	switch v.Kind() {
	case wire.KindText:
		return wire.AppendString(b, v.Text())
	case wire.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case wire.KindDuration, wire.KindTimestamp:
		return wire.AppendString(b, v.String())
	case wire.KindRate:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
	default:
		return append(b, "null"...)
	}
}

// AppendSetJSON appends the set as a JSON array of row objects keyed by column
// name, in column order.
func AppendSetJSON(b []byte, s *wire.ResultSet) []byte {
	b = append(b, '[')
	for i, row := range s.Rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, c := range s.Columns {
			if j > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, c.Name)
			b = append(b, ':')
			b = AppendValueJSON(b, row[j])
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// String returns the event as the shell prints it, one line, for example
//
//	[clock prod] tick 42 at 2030-01-01T00:00:04.1Z (generation 1)
//	[clock prod] generation 1 paced period 100ms skew 10ms origin … rate 60
//	[clock prod] ended: DomainRemoved
//	[clock prod] error: produce domain "prod" generation 1: domain clock projection leaves …
//	[clock prod] interrupted: the serving node lost contact with the cluster's leader …
//
// The line holds the serving node's text (the domain name, a failure's
// message) as it came: the shell escapes control characters before it
// writes the line to a terminal, and so should any program that does.
func (ev ClockEvent) String() string {
	head := "[clock " + grammar.FormatName(ev.Domain) + "] "
	switch ev.Kind {
	case EventTick:
		return head + "tick " + strconv.FormatUint(ev.Clock.Tick.ID, 10) + " at " +
			grammar.FormatTimestamp(ev.Clock.Tick.Boundary) +
			" (generation " + strconv.FormatUint(ev.Clock.Tick.Generation, 10) + ")"
	case EventState:
		return head + wire.FormatObserved(ev.Clock.Observed)
	case EventEnd:
		return head + "ended: " + ev.Reason.String()
	case EventError:
		if ev.Failure != nil {
			return head + "error: " + ev.Failure.Message
		}
		return head + "error"
	case EventInterrupted:
		if ev.Failure != nil {
			return head + "interrupted: " + ev.Failure.Message
		}
		return head + "interrupted"
	default:
		return head + ev.Frame().String()
	}
}

// FormatEventLine renders the frame as the shell prints the clock event
// it reports (ClockEvent.String), for a program that holds the frame, not
// the event: the console's statement box prints frames with it, so an
// operator reads one format in the shell and in the browser.
func FormatEventLine(f wire.Frame) string {
	ev := ClockEvent{Domain: f.Domain, Attachment: f.Attachment}
	switch f.Kind {
	case wire.FrameState:
		ev.Kind, ev.Clock.Observed = EventState, f.Clock
	case wire.FrameTick:
		ev.Kind, ev.Clock.Tick, ev.Clock.Reading = EventTick, f.Tick, f.Reading
	case wire.FrameEnd:
		ev.Kind, ev.Reason = EventEnd, f.Reason
	case wire.FrameError, wire.FrameInterrupted:
		ev.Kind = EventError
		if f.Kind == wire.FrameInterrupted {
			ev.Kind = EventInterrupted
		}
		if f.Failure.Message != "" {
			failure := f.Failure
			ev.Failure = &failure
		}
	default:
		return "[clock " + grammar.FormatName(f.Domain) + "] " + f.String()
	}
	return ev.String()
}
