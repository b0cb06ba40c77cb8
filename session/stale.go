package session

import (
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

// interruptible is what an Engine that can lose the cluster tells of the
// state its reads serve: why it cannot vouch for it (a cluster member
// whose authority lease lapsed, or that is catching up after regaining
// it), nil while it can. An engine without it always vouches.
type interruptible interface {
	Interruption() *clockrt.Interruption
}

// staleWarning returns the warning a read carries on an engine that
// cannot vouch for its state, or "" when it can.
func (s *Session) staleWarning() string {
	e, ok := s.node.(interruptible)
	if !ok {
		return ""
	}
	in := e.Interruption()
	if in == nil {
		return ""
	}
	return "this node cannot vouch for what it read: " + in.Cause +
		"; its state may be stale until it is back and caught up; read through another node for the cluster's current state"
}

// warnIfStale adds staleWarning to a read's result.
func (s *Session) warnIfStale(r wire.Result) wire.Result {
	if w := s.staleWarning(); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	return r
}
