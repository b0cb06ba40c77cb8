// Package follow is the receiving side of a session, shared by every reader
// of one: a followed clock as Go values and the arithmetic a reader does on
// it (clocktime.go), the one coalescing follow of attached clocks with the
// unread events per domain (follow.go), the attach bookkeeping that admits
// only frames of held attachments (attachments.go), the JSON rendering of
// values and result sets and the shell's line of a clock event
// (present.go; a value's and a frame's plain text are wire's), the one
// statement error of the module (statementerror.go: the positioned failure
// a session and the remote client return alike, which package nspl names
// Error) and its wire form and back (wireerror.go).
//
// It sits below session, as ../shared/DESIGN.md draws it ("follow/ (client
// side, shared)"), so that the remote client, which decodes a server's
// stream into these values, links neither the server-side session nor
// what a session runs on: follow imports only wire, clock and grammar of
// this module, besides record for the typed lifecycle errors a decoded
// failure carries (record holds lifecycle's plain values without its
// transitions). The embedded API builds the same Follow from a local
// session's frames, the shell, the script runner and nspl clock read its
// events from either, and a program that prints frames rebuilds each from
// its event (ClockEvent.Frame).
//
// Using it:
//
//	f := follow.NewFollow(wire.ErrClosed)
//	f.Attached("prod", r.Attachment, *r.Clock)  // the attach reply, before its frames
//	f.Apply(frame)                              // every frame of the attachment after it
//	ev, err := f.NextEvent(ctx)                 // coalesced: newest state, newest tick
//	c, _ := f.Clock("prod")
//	logical, err := c.LogicalAt(utc)
//
// Follow is safe for concurrent use: one goroutine applies frames while
// others read clocks and events. It never reads the wall clock (a Clock's
// arithmetic takes the caller's UTC) and never starts a goroutine. It must
// never be used to hold server-side state: what a session delivers, and in
// which order, is package session's.
package follow
