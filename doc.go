// Package nspl embeds the NSPL domain-clock statement engine in a Go
// program: Open starts a node on an embedded single-node catalog, sessions
// run NSPL statements against it, and a session that attaches a domain
// clock follows it as Go values. This package is all an embedding program
// imports; the packages under it are the engine's parts.
//
//	eng, err := nspl.Open(ctx, nspl.Options{DataDir: dir})
//	defer eng.Close()
//	sess, err := eng.NewSession()
//	_, err = sess.Exec(ctx,
//		nspl.CreatePaced("prod", time.Second, 100*time.Millisecond),
//		nspl.Use("prod"), nspl.Start().At(origin).Rate(2), nspl.Attach())
//	c, _ := sess.Clock("prod")
//	now, err := c.LogicalAt(time.Now())          // logical time.Time
//	wait, err := c.WaitUntil(time.Now(), target) // time.Duration
//	ok := c.Admits(eventTime)                    // within the admission window
//	for ev := range sess.Events(ctx) { ... }
//
// # Statements
//
// Session.Exec runs Statements built from Go values (Create, CreatePaced,
// Use, Start, Stop, Attach, Detach, Describe, Drop, ListDomains, Begin,
// Commit, Revert), which print themselves as canonical NSPL, so a program
// never quotes a name or formats an instant; Session.ExecText runs text a
// person wrote. Domain names are case-insensitive everywhere one is taken:
// "Prod", "PROD" and "prod" are one domain, stored as "prod".
//
// # Errors
//
// A failed statement is an *Error with its position that matches one of
// this package's sentinels (ErrAlreadyRunning, ErrNotFound,
// ErrNoActiveDomain, …) with errors.Is; the sentinels are the values the
// engine's parts raise, so a remote client's errors match them too.
// Reopening a DataDir resumes the domains that were running, so START on
// one fails with ErrAlreadyRunning: attach to it, or STOP it first.
//
// # Logging
//
// Options.Logger receives every log line, the consensus library's
// included, and its handler's level alone decides what is written; raft's
// routine election lines arrive at debug. The zero Options logs warnings
// and errors only, through slog.Default's handler, so an engine that works
// writes nothing.
//
// # Followed clocks
//
// Clock events are coalesced per domain, so a caller that reads none never
// holds the session up: the newest state and tick of a domain replace older
// unread ones, and an end replaces everything before it. A followed clock
// (Session.Clock) always holds the newest state and tick the session
// received, whether or not its events were read, and answers logical time,
// physical waits and admission windows in time.Time and time.Duration with
// the arithmetic a node uses.
//
// A Session and a remote client.Client are both a Follower, so a program
// written against it runs unchanged on a cluster; the nspl shell, script
// runner and nspl clock run on either through the same methods. A program
// that prints frames renders each event's (ClockEvent.Frame).
//
// The package owns little logic of its own, the statement builders (which
// print through the planner's canonical printer) and the default logger:
// statements, the follow of clocks and events run in package session,
// clocks are served by package node. It
// never reads the wall clock except through Options.TimeSource, never
// starts a goroutine that Engine.Close or Session.Close does not stop and
// wait for, and never talks to other nodes: it embeds one single-node
// catalog. To run statements against a cluster, use package client, which
// speaks to a node's API (package server) instead.
package nspl
