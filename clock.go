package nspl

import (
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/runtime"
)

// Tick is an accepted tick: generation, one-based id, logical boundary and
// the authority's UTC observation.
type Tick = runtime.Tick

// Clock is a followed domain clock as the session last received it: the
// observed clock of the attach reply or the newest state frame, and the
// newest tick of that clock's generation.
//
// Its methods are the client-side arithmetic of package clock,
// exactly what a node projects: logical time rounds down, waits round up.
// They use the caller's UTC, so a host whose UTC is offset from the
// cluster's projects shifted instants (the offset times the rate); Reading
// is the serving node's own reading to anchor on instead.
type Clock struct {
	// Domain is the followed domain.
	Domain string
	// Observed is the observed clock: generation, state and, when paced,
	// period, skew and mapping.
	Observed clock.Observed
	// Tick is the newest received tick of Observed's generation; its ID is
	// 0 when none arrived since the clock became paced.
	Tick Tick
	// Reading is the serving node's logical reading taken when Tick's
	// frame was built.
	Reading int64
}

// LogicalAt returns the domain's logical time at the UTC instant utc (signed
// Unix nanoseconds): the paced projection rounded down, or utc itself for an
// unpaced clock. A stopped or uninstalled clock is an error wrapping
// clock.ErrNotReadable.
func (c Clock) LogicalAt(utc int64) (int64, error) { return c.Observed.LogicalAt(utc) }

// WaitUntil returns the physical nanoseconds that must elapse after the UTC
// instant utc before logical time reaches target, rounded up so a wait
// never ends early; 0 when target is reached.
func (c Clock) WaitUntil(utc, target int64) (uint64, error) { return c.Observed.WaitUntil(utc, target) }

// WindowAt returns the paced admission window at the UTC instant utc: the
// newest 256 reached tick centers and their inclusive skew, reconstructed
// from the mapping as a node's ingestion does.
func (c Clock) WindowAt(utc int64) (clock.Window, error) { return c.Observed.WindowAt(utc) }
