package main

import (
	"strconv"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// shellFrameLine renders a frame for the shell, one line, for example
//
//	[clock prod] tick 42 at 2030-01-01T00:00:04.1Z (generation 1)
//	[clock prod] generation 1 paced period 100ms skew 10ms origin … rate 60
//	[clock prod] ended: DomainRemoved
func shellFrameLine(f wire.Frame) string {
	head := "[clock " + grammar.FormatName(f.Domain) + "] "
	switch f.Kind {
	case wire.FrameTick:
		return head + "tick " + strconv.FormatUint(f.Tick.ID, 10) + " at " +
			grammar.FormatTimestamp(f.Tick.Boundary) +
			" (generation " + strconv.FormatUint(f.Tick.Generation, 10) + ")"
	case wire.FrameState:
		return head + session.FormatObserved(f.Clock)
	case wire.FrameEnd:
		return head + "ended: " + f.Reason.String()
	default:
		return head + session.FormatFrame(f)
	}
}

// clockFrameLine renders a frame for nspl clock: wire.Frame's own stable
// line ("tick prod generation 1 id 42 boundary … authority_utc … reading …")
// or, with --format json, its wire JSON object.
func clockFrameLine(f wire.Frame, format outputFormat) string {
	if format == formatJSON {
		return string(f.AppendJSON(nil))
	}
	return session.FormatFrame(f)
}
