package follow

import (
	"strconv"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// The plain-text and JSON renderings of wire's values, result sets, frames
// and observed clocks as operators read them. They live here, not in wire,
// because they print durations, timestamps and rates as NSPL text, which
// grammar owns and wire may not import.

// FormatValue renders v as plain text: durations and rates as NSPL reads them
// back ("1.5s", "60"), timestamps as RFC 3339 UTC, null as "NULL".
func FormatValue(v wire.Value) string {
	switch v.Kind() {
	case wire.KindText:
		return v.Text()
	case wire.KindUint:
		return strconv.FormatUint(v.Uint(), 10)
	case wire.KindDuration:
		return grammar.FormatDuration(v.Uint())
	case wire.KindTimestamp:
		return grammar.FormatTimestamp(v.Int())
	case wire.KindRate:
		return grammar.FormatRate(v.Float())
	default:
		return "NULL"
	}
}

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
		return wire.AppendString(b, FormatValue(v))
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

// FormatFrame renders the frame as one plain line, for example
// "tick prod generation 2 id 17 boundary 2026-01-01T00:00:16Z ...".
func FormatFrame(f wire.Frame) string {
	name := grammar.FormatName(f.Domain)
	switch f.Kind {
	case wire.FrameState:
		return "clock " + name + " " + FormatObserved(f.Clock)
	case wire.FrameTick:
		return "tick " + name + " generation " + strconv.FormatUint(f.Tick.Generation, 10) +
			" id " + strconv.FormatUint(f.Tick.ID, 10) +
			" boundary " + grammar.FormatTimestamp(f.Tick.Boundary) +
			" authority_utc " + grammar.FormatTimestamp(f.Tick.AuthorityUTC) +
			" reading " + grammar.FormatTimestamp(f.Reading)
	case wire.FrameEnd:
		return "end " + name + " " + f.Reason.String()
	case wire.FrameError:
		return "error " + name + " generation " + strconv.FormatUint(f.Failure.Generation, 10) +
			" op " + strconv.Quote(f.Failure.Op) + ": " + f.Failure.Message
	case wire.FrameInterrupted:
		return "interrupted " + name + " generation " + strconv.FormatUint(f.Failure.Generation, 10) +
			": " + f.Failure.Message
	default:
		return f.Kind.String() + " " + name
	}
}

// FormatEventLine renders the frame as the shell prints a clock event,
// one line headed by the domain, for example
//
//	[clock prod] tick 42 at 2030-01-01T00:00:04.1Z (generation 1)
//	[clock prod] generation 1 paced period 100ms skew 10ms origin … rate 60
//	[clock prod] ended: DomainRemoved
//	[clock prod] error: produce domain "prod" generation 1: …
//	[clock prod] interrupted: the serving node lost contact with …
//
// The shell and the console's statement box print frames with it, so an
// operator reads one format in both; nspl clock prints FormatFrame's
// stable fields instead.
func FormatEventLine(f wire.Frame) string {
	head := "[clock " + grammar.FormatName(f.Domain) + "] "
	switch f.Kind {
	case wire.FrameTick:
		return head + "tick " + strconv.FormatUint(f.Tick.ID, 10) + " at " +
			grammar.FormatTimestamp(f.Tick.Boundary) +
			" (generation " + strconv.FormatUint(f.Tick.Generation, 10) + ")"
	case wire.FrameState:
		return head + FormatObserved(f.Clock)
	case wire.FrameEnd:
		return head + "ended: " + f.Reason.String()
	case wire.FrameError:
		if f.Failure.Message != "" {
			return head + "error: " + f.Failure.Message
		}
		return head + "error"
	case wire.FrameInterrupted:
		if f.Failure.Message != "" {
			return head + "interrupted: " + f.Failure.Message
		}
		return head + "interrupted"
	default:
		return head + FormatFrame(f)
	}
}

// FormatObserved renders an observed clock as plain text: "generation 2
// stopped", or for a paced clock "generation 2 paced period 1s skew 100ms
// origin 2026-01-01T00:00:00Z anchor 2026-05-01T10:00:00Z rate 60".
func FormatObserved(o clock.Observed) string {
	s := "generation " + strconv.FormatUint(o.Generation, 10) + " " + o.State.String()
	if o.State == clock.Paced {
		s += " period " + grammar.FormatDuration(o.Period) +
			" skew " + grammar.FormatDuration(o.Skew) +
			" origin " + grammar.FormatTimestamp(o.LogicalStart) +
			" anchor " + grammar.FormatTimestamp(o.WallStartedAt) +
			" rate " + grammar.FormatRate(o.Rate)
	}
	return s
}
