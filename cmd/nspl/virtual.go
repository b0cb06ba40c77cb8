package main

import (
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/grammar"
)

// checkVirtualTime validates --virtual-time and --virtual-start: virtual
// time is the embedded node's, on a fresh in-memory catalog, so it excludes
// --connect (a served node keeps real time), --data-dir (a catalog kept
// across runs holds instants of real time, or of another run's virtual
// time) and --console (a browser's statements would change what a repeated
// run prints). It sets opts.virtualAt to the start instant.
func checkVirtualTime(opts *options) error {
	if !opts.virtualTime {
		if opts.virtualStart != "" {
			return usageErrorf("--virtual-start sets where --virtual-time starts; give --virtual-time too")
		}
		return nil
	}
	switch {
	case opts.remote.connect != "":
		from := opts.remote.connectFrom
		if from == "" {
			from = "--connect"
		}
		return usageErrorf("--virtual-time runs an embedded node on virtual time and excludes %s: a served node keeps real time", from)
	case opts.dataDir != "":
		return usageErrorf("--virtual-time runs on a fresh in-memory catalog and excludes --data-dir, whose instants are of real time")
	case opts.console != "":
		return usageErrorf("--virtual-time excludes --console: statements from a browser would change what a repeated run prints")
	}
	opts.virtualAt = timesource.DefaultVirtualStart
	if opts.virtualStart != "" {
		at, err := grammar.ParseTimestamp(opts.virtualStart)
		if err != nil {
			return usageErrorf("--virtual-start %q: %v", opts.virtualStart, err)
		}
		opts.virtualAt = at
	}
	return nil
}
