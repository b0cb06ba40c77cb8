package main

import (
	"github.com/nspl-dev/nspl/follow"
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
	return follow.FormatEventLine(ev.Frame())
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
