// Package client is the remote session of nspl: it runs statements on a
// node over the session protocol (see package server) and delivers the same
// results, positioned errors, followed clocks and clock events an embedded
// nspl.Session does, so the shell, the script runner and nspl clock run
// unchanged against it.
//
// Using it:
//
//	c, err := client.Dial(ctx, client.Config{URLs: []string{"https://127.0.0.1:7401"}, TLS: tc})
//	defer c.Close()
//	res, err := c.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
//	for ev := range c.Events(ctx) { ... }
//
// A statement is parsed once, by the server: ExecText cuts the caller's
// text once (grammar.Split) and sends each statement's own source text, as
// written; the server parses and plans it, and a position it reports (a
// syntax error, a bad literal, a refusal at the statement's start) is in
// the text it was sent, which the client maps to the statement's place in
// the caller's text (grammar.StatementSource.Locate). The client tells the
// statements it must handle itself by their keywords, without parsing them:
// ATTACH and DETACH, whose replies change what it follows, and LIST
// DOMAINS, whose rows a row sink takes. It parses only the archive
// statements (BACKUP, RESTORE, DESCRIBE BACKUP), for the file they name,
// which is on this machine. Exec and ExecRows take a plan a Go caller built
// and send its canonical text.
//
// The client follows the spec's session attachment rules for a lost
// transport: the end of a session interrupts every followed clock (Notify
// reports it), the next session restores the active domain and attaches the
// followed clocks again before it serves any other request, reporting each
// restored clock as a state event; a restoration the new session refuses is
// retried after one second, doubling to thirty, and starts again from one
// second on each new session; one refused as not found ends the attachment
// with a DomainRemoved end event; an end frame with reason NodeShutdown (a
// node draining for shutdown) ends that attachment but not the following,
// which the next session restores (follow.Follow.Interrupted); one left unanswered past RequestTimeout
// ends that session, and the next attaches again. An open transaction does
// not survive its session (TransactionLost). Reconnecting tries the URLs in
// order, one second apart doubling to thirty, while clocks are followed; with
// none followed the next request connects.
//
// When the server announces an idle bound in its welcome, the client sends
// a ping every third of it, so a session that runs nothing stays open. A
// session error the server sends before it ends the stream (a malformed
// message, an idle or slow session) is the reason a waiting request fails
// with: ErrConnectionLost wrapping the server's sentinel (wire.ErrProtocol,
// wire.ErrSessionIdle, ...).
//
// Archive files are the client's: BACKUP's archive comes back with its
// reply, is verified and written here crash-safely (backup.WriteFile,
// refusing to replace a file that is not an archive unless
// Config.OverwriteArchives), and the file a RESTORE or DESCRIBE BACKUP
// names is read here (a regular file of at most backup.MaxArchiveBytes)
// and uploaded for the node to verify. The node never opens a path a
// client names.
//
// Every wait is bounded or cancellable, every read is capped
// (wire.ServerMessageLimit) and unread events are coalesced per domain by
// the one follow of package follow (follow.Follow), so memory does not
// grow with a slow reader. Beside that follow's attachments the client keeps
// its own record of which session holds each followed clock and when a
// refused restoration is retried, because a followed clock outlives its
// attachment across sessions whose attachment numbers start again, which
// follow.Attachments, keyed by one session's numbers, does not model. Time comes from an injected
// timesource.Source. The client persists nothing but the archives BACKUP
// writes.
//
// The client links no raft, catalog, node, clockrt (only its leaf time
// source, clockrt/timesource) or session: what it
// shares with a server is wire's vocabulary and the receiving side in
// package follow. Its files follow its concepts: errors.go (sentinels and
// connect hints), notice.go, config.go, dial.go (Dial and the transport),
// client.go (the Client and its reads), exec.go (statements: what is sent,
// and their archives, archive.go), lane.go (one request at a time), reconnect.go
// (opening a session and restoring onto it), replies.go (the bookkeeping
// of replies and frames as the stream's reader hands them over), conn.go
// (one session stream) and supervisor.go.
package client
