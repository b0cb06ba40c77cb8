// Package nspl embeds the NSPL domain-clock statement engine in a Go
// program: Open starts a node on an embedded single-node catalog, sessions
// run NSPL text against it, and a session that attaches a domain clock
// follows it as typed Go values.
//
//	eng, err := nspl.Open(ctx, nspl.Options{DataDir: dir})
//	defer eng.Close()
//	sess, err := eng.NewSession()
//	results, err := sess.Exec(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
//	c, _ := sess.Clock("prod")
//	now, err := c.LogicalAt(utcNow)
//	for ev := range sess.Events(ctx) { ... }
//
// Clock events are coalesced per domain, so a caller that reads none never
// holds the session up: the newest state and tick of a domain replace older
// unread ones, and an end replaces everything before it. A followed clock
// (Session.Clock) always holds the newest state and tick the session
// received, whether or not its events were read, and answers logical time,
// physical waits and admission windows with the arithmetic of package clock
// that a node uses.
//
// A Session and a remote client.Client are both a Follower, so a program
// written against it runs unchanged on a cluster; the nspl shell, script
// runner and nspl clock run on either through the same methods. A program
// that prints frames renders each event's (ClockEvent.Frame).
//
// The package owns no logic of its own: statements, the follow of clocks
// and events run in package session, clocks are served by package node. It never reads the
// wall clock except through Options.TimeSource, never starts a goroutine that
// Engine.Close or Session.Close does not stop and wait for, and never talks
// to other nodes: it embeds one single-node catalog. To run statements against
// a cluster, use package client, which speaks to a node's API (package
// server) instead.
package nspl
