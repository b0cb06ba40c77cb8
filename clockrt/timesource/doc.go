// Package timesource is the one place the node runtime gets wall time,
// monotonic readings and timers from.
//
// Production code takes a Source and never calls time.Now, time.Sleep or
// time.NewTimer itself; System is the only implementation that touches the
// process clock. Tests use Fake, whose Advance fires due timers in deadline
// order on the calling goroutine and whose BlockUntil lets a test wait, on
// channels rather than sleeps, until the code under test has armed its
// timers. A test rig that injects a host's clock faults into a node wraps
// its source in an Adjustable: UTC stepped while the monotonic clock runs
// on, and timers paused as a stopped process's are.
//
// Do not use a Source to measure domain (logical) time: domain clocks project
// Source.Paired through their committed mapping in package clockrt. A Source
// is physical time only.
package timesource
