package nspl

import (
	"context"
	"iter"
)

// Follower runs statements and follows the clocks they attach. An embedded
// *Session and a remote *client.Client both implement it, with the same
// results, positioned errors, followed clocks and coalesced events, so a
// program written against it moves from an embedded engine to a cluster
// unchanged. Statements built from Go values reach ExecText through
// Script.
type Follower interface {
	// ExecText runs every statement of text in order, stopping at the
	// first failure.
	ExecText(ctx context.Context, text string) ([]Result, error)
	// Clock returns the followed clock of domain, a name in any case;
	// false when the domain is not followed.
	Clock(domain string) (Clock, bool)
	// NextEvent returns the oldest unread clock event, waiting for one.
	NextEvent(ctx context.Context) (ClockEvent, error)
	// Events iterates over clock events as NextEvent returns them.
	Events(ctx context.Context) iter.Seq[ClockEvent]
}

var _ Follower = (*Session)(nil)
