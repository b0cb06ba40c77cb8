package main

import (
	"strconv"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
)

// shellEventLine renders a clock event for the shell, one line, for example
//
//	[clock prod] tick 42 at 2030-01-01T00:00:04.1Z (generation 1)
//	[clock prod] generation 1 paced period 100ms skew 10ms origin … rate 60
//	[clock prod] ended: DomainRemoved
//	[clock prod] error: produce domain "prod" generation 1: domain clock projection leaves …
//	[clock prod] interrupted: the serving node lost contact with the cluster's leader …
//
// The line is passed through termSafe: its domain name and failure message
// come from the serving node.
func shellEventLine(ev follow.ClockEvent) string {
	return termSafe(rawShellEventLine(ev))
}

func rawShellEventLine(ev follow.ClockEvent) string {
	head := "[clock " + grammar.FormatName(ev.Domain) + "] "
	switch ev.Kind {
	case follow.EventTick:
		return head + "tick " + strconv.FormatUint(ev.Clock.Tick.ID, 10) + " at " +
			grammar.FormatTimestamp(ev.Clock.Tick.Boundary) +
			" (generation " + strconv.FormatUint(ev.Clock.Tick.Generation, 10) + ")"
	case follow.EventState:
		return head + follow.FormatObserved(ev.Clock.Observed)
	case follow.EventEnd:
		return head + "ended: " + ev.Reason.String()
	case follow.EventError:
		if ev.Failure != nil {
			return head + "error: " + ev.Failure.Message
		}
		return head + "error"
	case follow.EventInterrupted:
		if ev.Failure != nil {
			return head + "interrupted: " + ev.Failure.Message
		}
		return head + "interrupted"
	default:
		return head + follow.FormatFrame(ev.Frame())
	}
}

// clockEventLine renders a clock event for nspl clock: the stable line of
// the frame it reports ("tick prod generation 1 id 42 boundary …
// authority_utc … reading …") or, with --format json, that frame's wire JSON
// object.
func clockEventLine(ev follow.ClockEvent, format outputFormat) string {
	f := ev.Frame()
	if format == formatJSON {
		return string(f.AppendJSON(nil))
	}
	return termSafe(follow.FormatFrame(f))
}
