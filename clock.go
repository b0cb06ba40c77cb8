package nspl

import "github.com/nspl-dev/nspl/session"

// Tick is an accepted tick: generation, one-based id, logical boundary and
// the authority's UTC observation.
type Tick = session.Tick

// Clock is a followed domain clock as the session last received it (see
// session.Clock): its methods project logical time, waits and the admission
// window for the caller's UTC.
type Clock = session.Clock
