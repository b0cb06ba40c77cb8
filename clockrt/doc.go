// Package clockrt (the clock runtime) holds what one node keeps locally for
// its domains. DESIGN.md calls this layer the node runtime; the package is
// not named runtime so that it does not shadow the standard library's, which
// every file reading goroutines or memory beside it had to import under an
// alias.
//
// A Registry keeps one shared lifecycle Allocation per domain. Control-plane
// synchronisation (Install, Remove) serialises on the registry's mutex
// and publishes each change by atomically replacing the allocation's
// complete, immutable Installation, then closing the replaced installation's
// Replaced channel: that channel is the one notification source for logical
// waiters and observers. An unchanged lifecycle publishes nothing and wakes
// no one. Removing a domain publishes missing before the allocation is
// discarded.
//
// Bind gives a Handle bound to a domain and its installed lifecycle
// generation. Handle.Now and Handle.Snapshot take no lock, and allocate
// nothing while the wall agrees with the frame: they load the
// installation, revalidate the generation and state, take one paired (wall
// and monotonic) reading of the time source and project the reading's UTC
// through the paced mapping (an unpaced clock reads that UTC). A reading's UTC is the wall at the generation's frame
// calibration plus the monotonic time elapsed since (frame.go), so a read
// whose wall agrees with the frame, within the source's pair tolerance,
// stores nothing and reads on every core scale as the time source does. A
// wall that stepped forward re-bases the frame; one that stepped backward
// parks it, takes a reading after parking and publishes the lowered frame
// with the bound of everything a read of the old frame could have returned
// as its floor, the generation's watermark: its reads hold at the
// watermark until they pass it. Reads take no lock on any path: each
// change of the frame is one compare-and-swap from the frame it was derived
// from, a read whose swap fails starts again on the frame it finds, and a
// parked frame is finished by whichever read (or replacement) finds it, so
// no read waits for another goroutine. Install and Remove serialise on the
// registry's lock, which no read takes. Reads of one generation on one
// node therefore never decrease, and never claim a logical nanosecond
// beyond the projection of some reading's UTC. Failures are typed
// (*ClockError wrapping a sentinel such as ErrDomainStopped or
// ErrStaleGeneration) and never fall back to wall time.
//
// A Producer on the authority emits each due tick as a ProgressReport;
// Registry.AcceptProgress fences and publishes them through the domain's
// progress watch. When the producer's projection, tick boundary, cadence or
// rate conversion fails, it logs the full typed report as a warning and its
// last report carries the same report (ClockFailure); every node
// that accepts it retains it for the generation beside the newest tick, so
// an Observer reads it and an attached session is told. Only the authority
// diagnoses its generation: another node's own reads of the same clock fail
// on their own, typed, when they are made.
//
// Time classes stay apart: a LogicalDeadline (domain, generation, logical
// target) is created only by Handle.Deadline and waited for by
// Handle.WaitUntil; a PhysicalDeadline (a private monotonic instant) is
// created and waited for only by a PhysicalClock. Neither converts into the
// other.
//
// Nothing in this package reads wall time or arms a timer except through the
// timesource.Source it is given, so tests drive it with timesource.Fake. The
// pure clock arithmetic lives in package clock; do not use this package for
// arithmetic on mappings a node has not installed (clients use package clock
// directly).
package clockrt
