package main

import (
	"github.com/nspl-dev/nspl/follow"
)

// shellEventLine renders a clock event for the shell: its one line
// (follow.ClockEvent.String, which an embedding program prints too), passed
// through termSafe, since its domain name and failure message come from the
// serving node.
func shellEventLine(ev follow.ClockEvent) string {
	return termSafe(ev.String())
}

// clockEventLine renders a clock event for nspl clock: the stable line of
// the frame it reports (wire.Frame.String: "tick prod generation 1 id 42
// boundary … authority_utc … reading …") or, with --format json, that
// frame's wire JSON object.
func clockEventLine(ev follow.ClockEvent, format outputFormat) string {
	f := ev.Frame()
	if format == formatJSON {
		return string(f.AppendJSON(nil))
	}
	return termSafe(f.String())
}
