package nspl

import (
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/follow"
)

// Tick is an accepted tick: generation, one-based id, logical boundary and
// the authority's UTC observation (BoundaryTime and AuthorityTime return
// them as time.Time).
type Tick = follow.Tick

// Clock is a followed domain clock as the session last received it. Its
// methods answer in Go's types for the caller's UTC:
//
//   - LogicalAt(utc) is the domain's logical time.Time at utc;
//   - WaitUntil(utc, target) is the time.Duration until logical time
//     reaches target, rounded up so a wait never ends early;
//   - Window(utc) is the admission window at utc, and Admits(t) whether
//     the window the newest received tick reached admits the logical
//     timestamp t.
//
// Its fields are the observed clock (Observed.State is one of the
// ClockState constants), the newest tick of its generation and the serving
// node's reading. See follow.Clock for the full contract.
type Clock = follow.Clock

// Window is a paced clock's admission window (Clock.Window): its Admits,
// Newest, Oldest, Bounds, Skew and Period.
type Window = follow.Window

// ClockState says whether a followed clock is readable, and how.
type ClockState = clock.ObservedState

// Clock states (Clock.Observed.State).
const (
	// Stopped: the domain is stopped; its clock has no time.
	Stopped = clock.Stopped
	// Uninstalled: the serving node has not installed the clock yet.
	Uninstalled = clock.Uninstalled
	// Unpaced: logical time is UTC.
	Unpaced = clock.Unpaced
	// Paced: logical time is projected from UTC at the domain's TIME RATE
	// and admits timestamps near its ticks.
	Paced = clock.Paced
)
