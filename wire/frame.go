package wire

import (
	"math"
	"strconv"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/literal"
)

// FrameKind says what a control-lane frame reports.
type FrameKind uint8

// Frame kinds.
const (
	// FrameState reports a changed observed clock.
	FrameState FrameKind = iota + 1
	// FrameTick reports the newest accepted tick of the observed generation.
	FrameTick
	// FrameEnd is the last frame of an attachment; Reason says why.
	FrameEnd
	// FrameError reports that the attached clock failed at its authority:
	// Failure names the generation, the operation and the arithmetic
	// cause. The attachment stays; no further tick of that generation
	// follows.
	FrameError
	// FrameInterrupted reports that the serving node cannot vouch for the
	// attached clock any more (code clock_interrupted, ErrClockInterrupted):
	// it lost contact with the consensus leader for longer than its
	// authority lease, or is still catching up after regaining it. Failure
	// names the generation the client last received and says why. The
	// attachment stays: no tick follows until the node vouches for the
	// clock again, when the next state or tick frame resumes it.
	FrameInterrupted
)

// String returns "state", "tick", "end", "error" or "interrupted".
func (k FrameKind) String() string {
	switch k {
	case FrameState:
		return "state"
	case FrameTick:
		return "tick"
	case FrameEnd:
		return "end"
	case FrameError:
		return "error"
	case FrameInterrupted:
		return "interrupted"
	default:
		return "frame(" + strconv.Itoa(int(k)) + ")"
	}
}

// EndReason says why an attachment ended.
type EndReason uint8

// End reasons.
const (
	// ReasonNone is the reason of frames that are not end frames.
	ReasonNone EndReason = iota
	// DomainRemoved: the domain was dropped from the catalog and the serving
	// node removed it.
	DomainRemoved
	// NodeShutdown: the serving node is shutting down gracefully and ends
	// the session after this frame. The domain is unaffected; a client
	// attaches to it again on its next session.
	NodeShutdown
)

// String returns the reason's name as the protocol spells it.
func (r EndReason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case DomainRemoved:
		return "DomainRemoved"
	case NodeShutdown:
		return "NodeShutdown"
	default:
		return "reason(" + strconv.Itoa(int(r)) + ")"
	}
}

// Tick is one accepted tick of a paced domain: the newest progress the
// domain's authority reported and the serving node accepted. The zero Tick
// (ID 0) means no tick has been accepted for the current generation.
type Tick struct {
	// Generation is the lifecycle generation the tick belongs to.
	Generation uint64
	// ID is the one-based tick id.
	ID uint64
	// Boundary is the tick's logical boundary, LogicalStart + (ID−1)×Period.
	Boundary int64
	// AuthorityUTC is the authority's UTC observation when it emitted the
	// tick, signed Unix nanoseconds.
	AuthorityUTC int64
}

// BoundaryTime returns Boundary as a time.Time in UTC.
func (t Tick) BoundaryTime() time.Time { return time.Unix(0, t.Boundary).UTC() }

// AuthorityTime returns AuthorityUTC as a time.Time in UTC.
func (t Tick) AuthorityTime() time.Time { return time.Unix(0, t.AuthorityUTC).UTC() }

// Frame is one control-lane frame about an attached domain clock.
//
// A state frame carries Clock, the newest observed clock when it differs
// from the one the client last received. A tick frame carries the newest
// accepted Tick of the generation the client last received as paced, and
// Reading, the serving node's own logical reading taken when the frame was
// built. An end frame carries Reason and is the attachment's last frame.
// An error frame carries Failure, the typed report of the clock's failure
// at its authority; it follows the state that reported Failure's generation
// as paced and any tick of that generation delivered before it. An
// interrupted frame carries Failure as well, with code clock_interrupted.
// Attachment numbers the attachment within its session, as the attach reply
// (Result.Attachment) did.
type Frame struct {
	Domain     string
	Attachment uint64
	Kind       FrameKind
	Clock      clock.Observed
	Tick       Tick
	Reading    int64
	Reason     EndReason
	Failure    ClockFailure
}

// String returns the frame as one plain line, the line nspl clock prints
// for it, for example
//
//	clock prod generation 2 paced period 1s skew 100ms origin … anchor … rate 60
//	tick prod generation 2 id 17 boundary 2026-01-01T00:00:16Z authority_utc … reading …
//	end prod DomainRemoved
//	error prod generation 2 op "project": …
//	interrupted prod generation 2: …
//
// The domain is written as NSPL writes names (`prod-1`). The line holds
// the serving node's text (a failure's message) as it came: a program that
// writes it to a terminal escapes control characters first.
func (f Frame) String() string {
	name := literal.FormatName(f.Domain)
	switch f.Kind {
	case FrameState:
		return "clock " + name + " " + FormatObserved(f.Clock)
	case FrameTick:
		return "tick " + name + " generation " + strconv.FormatUint(f.Tick.Generation, 10) +
			" id " + strconv.FormatUint(f.Tick.ID, 10) +
			" boundary " + literal.FormatTimestamp(f.Tick.Boundary) +
			" authority_utc " + literal.FormatTimestamp(f.Tick.AuthorityUTC) +
			" reading " + literal.FormatTimestamp(f.Reading)
	case FrameEnd:
		return "end " + name + " " + f.Reason.String()
	case FrameError:
		return "error " + name + " generation " + strconv.FormatUint(f.Failure.Generation, 10) +
			" op " + strconv.Quote(f.Failure.Op) + ": " + f.Failure.Message
	case FrameInterrupted:
		return "interrupted " + name + " generation " + strconv.FormatUint(f.Failure.Generation, 10) +
			": " + f.Failure.Message
	default:
		return f.Kind.String() + " " + name
	}
}

// FormatObserved renders an observed clock as plain text: "generation 2
// stopped", or for a paced clock "generation 2 paced period 1s skew 100ms
// origin 2026-01-01T00:00:00Z anchor 2026-05-01T10:00:00Z rate 60".
func FormatObserved(o clock.Observed) string {
	s := "generation " + strconv.FormatUint(o.Generation, 10) + " " + o.State.String()
	if o.State == clock.Paced {
		s += " period " + literal.FormatDuration(o.Period) +
			" skew " + literal.FormatDuration(o.Skew) +
			" origin " + literal.FormatTimestamp(o.LogicalStart) +
			" anchor " + literal.FormatTimestamp(o.WallStartedAt) +
			" rate " + literal.FormatRate(o.Rate)
	}
	return s
}

// AppendJSON appends the frame's wire form: one JSON object whose instants
// and durations are integer nanoseconds. Its length is the frame's size for
// the session's frame limit.
func (f Frame) AppendJSON(b []byte) []byte {
	b = append(b, `{"domain":`...)
	b = AppendString(b, f.Domain)
	b = append(b, `,"attachment":`...)
	b = strconv.AppendUint(b, f.Attachment, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, f.Kind.String()...)
	b = append(b, '"')
	switch f.Kind {
	case FrameState:
		b = append(b, `,"clock":`...)
		b = AppendObserved(b, f.Clock)
	case FrameTick:
		b = append(b, `,"generation":`...)
		b = strconv.AppendUint(b, f.Tick.Generation, 10)
		b = append(b, `,"tick":`...)
		b = strconv.AppendUint(b, f.Tick.ID, 10)
		b = append(b, `,"boundary_ns":`...)
		b = strconv.AppendInt(b, f.Tick.Boundary, 10)
		b = append(b, `,"authority_utc_ns":`...)
		b = strconv.AppendInt(b, f.Tick.AuthorityUTC, 10)
		b = append(b, `,"reading_ns":`...)
		b = strconv.AppendInt(b, f.Reading, 10)
	case FrameEnd:
		b = append(b, `,"reason":"`...)
		b = append(b, f.Reason.String()...)
		b = append(b, '"')
	case FrameError, FrameInterrupted:
		// The failure's domain is the frame's.
		b = append(b, `,"generation":`...)
		b = strconv.AppendUint(b, f.Failure.Generation, 10)
		b = append(b, `,"op":`...)
		b = AppendString(b, f.Failure.Op)
		b = append(b, `,"code":`...)
		b = AppendString(b, f.Failure.Code)
		b = append(b, `,"cause":`...)
		b = AppendString(b, f.Failure.Cause)
		b = append(b, `,"message":`...)
		b = AppendString(b, f.Failure.Message)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (f Frame) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendObserved appends an observed clock as a JSON object; the paced
// fields appear only for a paced clock.
func AppendObserved(b []byte, o clock.Observed) []byte {
	b = append(b, `{"generation":`...)
	b = strconv.AppendUint(b, o.Generation, 10)
	b = append(b, `,"state":"`...)
	b = append(b, o.State.String()...)
	b = append(b, '"')
	if o.State == clock.Paced {
		b = append(b, `,"period_ns":`...)
		b = strconv.AppendUint(b, o.Period, 10)
		b = append(b, `,"skew_ns":`...)
		b = strconv.AppendUint(b, o.Skew, 10)
		b = append(b, `,"logical_start_ns":`...)
		b = strconv.AppendInt(b, o.LogicalStart, 10)
		b = append(b, `,"wall_started_at_ns":`...)
		b = strconv.AppendInt(b, o.WallStartedAt, 10)
		b = append(b, `,"time_rate":`...)
		b = appendRate(b, o.Rate)
	}
	return append(b, '}')
}

// appendRate appends a finite rate as a JSON number; a value JSON cannot
// hold (never a valid TIME RATE) is written as null.
func appendRate(b []byte, r float64) []byte {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, r, 'g', -1, 64)
}
