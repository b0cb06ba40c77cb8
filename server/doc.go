// Package server is a node's API listener: the client session protocol, the
// cluster's leave and remove requests, the node-to-node interconnect mounted
// under /v1/peer/, /healthz and Prometheus /metrics, all on one TLS listener
// that speaks HTTP/2. Package serve builds the one nspl serve runs, wired to
// its cluster member; with Config.Opened it serves while the node opens,
// the peer routes reaching the starting member and every other route
// answering 503 until the node has opened.
//
// # Authentication
//
// Nobody gets in unauthenticated. The listener requires TLS 1.2 or later
// (pki's ServerConfig, which nspl serve uses, asks for 1.3) and verifies
// client certificates against the cluster CA.
// A session, leave, remove or metrics request is admitted when it presents
// a client certificate (URI SAN nspl-client://NAME), or, when the server was
// given a token, the header "Authorization: Bearer TOKEN" with that exact
// token (compared in constant time; the scheme name in any case). Every
// presented token is a guess, checked and counted in one step by the
// server's one guess limiter (internal/guesslimit), which the console's
// login shares: past Limits.TokenGuessesPerAddress wrong tokens from one
// address prefix (IPv4 /32, IPv6 /64) in TokenGuessWindow, or
// Limits.TokenGuesses from all prefixes that have not presented the right
// token within a day, the request is answered 429 with Retry-After. A node
// certificate is not a client identity and is refused there. The peer
// interconnect admits only verified node certificates; which node may call
// which peer route is its own business. /healthz answers without authentication and says nothing but
// "ok". Plain HTTP (unencrypted HTTP/2, prior knowledge) is served only when
// Config.Insecure asks for it, and then only on a loopback address.
//
// # Host names
//
// Before any of that, a plain-HTTP listener, and a TLS listener on a
// loopback address, answer only requests whose Host is a loopback name
// (localhost, 127.0.0.0/8, [::1]), a name of the node's certificate (TLS)
// or one of Config.AllowedHosts; any other Host gets 421 Misdirected
// Request. A page whose own name resolves to 127.0.0.1 (DNS rebinding) is
// same-origin to the browser and cannot be told apart otherwise.
// GuardLoopbackHosts applies the same check to the metrics listener's
// loopback connections (hosts.go).
//
// # Session protocol, version 1
//
// The protocol's messages, paths, limits and codecs are package wire's, which
// the remote client shares; this package serves them.
//
// A client opens a session with one long-lived bidirectional HTTP/2 stream:
//
//	POST /v1/session    Content-Type: application/x-ndjson
//
// The request body and the response body are streams of newline-delimited
// JSON objects, one message per line. The server answers 200 at once and
// flushes every message as it is written. A client message is at most
// wire.ClientMessageLimit bytes and a server message at most
// wire.ServerMessageLimit.
// The session lives as long as the stream: closing either side ends it and
// discards its attachments. Its open transaction outlives a lost stream:
// unless the client said close, the server holds the transaction for
// Limits.ResumeTimeout under the session's resume token (the welcome's
// "resume"), and the client's next session, naming that token in the
// Nspl-Resume header with the same identity, takes it up with its queued
// steps (its welcome carries the state, in_tx set). A client that
// reconnects before the server noticed the loss takes the old session over:
// it is ended and its transaction handed on. Each identity holds at most
// Limits.MaxSessionsPerIdentity such transactions.
//
// Client messages:
//
//	{"type":"exec","id":N,"text":"USE prod;"}   run exactly one statement
//	{"type":"exec","id":N,"text":"LIST DOMAINS;","rows":true}  its rows as they are produced
//	{"type":"exec","id":N,"text":"STOP;","write":"<id>"}  a write applied once under its id
//	{"type":"cancel","id":N}                     cancel request N if it runs
//	{"type":"domains","id":N}                    list domain names
//	{"type":"ping"}                              keep the session open
//	{"type":"close"}                             end the session; revert its transaction
//	{"type":"archive","id":N,"data":"<base64>"}  a piece of exec N's archive
//
// Each line is exactly one JSON object: unknown fields, unknown types and
// anything after the object (a trailing "]") are refused. The ids of exec
// and domains requests strictly increase, from 1. Requests run one at a time
// in the order sent, on the session's ordered lane; cancel is acted on as
// soon as it is read; ping is answered by nothing.
//
// A session ends with a session error, an error message with id 0 after
// which the server writes nothing and ends the stream, when its client
// breaks the protocol or a bound (Limits): code protocol (a malformed
// message), message_too_large, request_order (an id not above the last),
// session_idle (no message, pings included, for SessionIdleTimeout, which
// the welcome announces as idle_timeout_ns; a client pings well within it)
// or message_timeout (a message begun and not ended within
// MessageTimeout, as one sent a byte at a time). The answers to requests
// read before a malformed one are written first.
//
// Server messages:
//
//	{"type":"welcome","version":1,"node":"n1","idle_timeout_ns":600000000000,"rows":true,"resume":"<token>","write_ids":true}
//	{"type":"rows","id":N,"set":{"columns":[...],"rows":[...]}}
//	{"type":"reply","id":N,"result":{...},"state":{...}}
//	{"type":"error","id":N,"error":{...},"state":{...}}
//	{"type":"frame","frame":{...}}
//	{"type":"names","id":N,"names":["prod",...]}
//	{"type":"archive","id":N,"data":"<base64>"}
//
// The welcome is the first message. Every exec is answered by exactly one
// reply or error. Streamed rows (wire.TypeRows) are the one addition to
// version 1, and each side learns of the other's: the welcome says
// "rows":true, and only then may a client set "rows":true on an exec (a
// server before them refuses the unknown field). Such an exec of LIST
// DOMAINS gets its rows in rows messages of at most wire.RowsChunkLimit
// rows, each written as the session produces it and never gathered, then
// its reply, whose set has the columns and no rows; any other statement is
// answered as usual. An exec without "rows" gets the whole set in its reply,
// as a client before streaming expects. A result carries statement (canonical text), message,
// domain, attachment, clock (the observed clock of an attach reply, as
// wire.AppendObserved writes it) and set, a typed result set:
// columns [{"name","type"}] with type null, text, uint, duration, timestamp or
// rate, and rows of values — strings, exact integers (durations and
// timestamps in nanoseconds), shortest round-trip floats, or null. An error
// carries line, column and offset in the request's text, message, and the
// stable code of its sentinel (syntax, no_active_domain, in_transaction,
// not_leader, domain_exists, …: the code each sentinel carries, see
// package wire), with a lifecycle refusal also whole under "lifecycle", so
// a client rebuilds the same *follow.StatementError a local session
// returns, matching the same sentinel. Servers before lifecycle refusals
// had their own codes sent each under the code "lifecycle"; clients still
// decode that form by its payload. session_closed (wire.ErrClosed, a
// session or node that closed under the request) comes at line 1, column 1,
// and the client returns it unpositioned, as a local session does. state is
// the session after the request: active domain and open transaction, for
// the prompt.
//
// A frame is wire.Frame.AppendJSON: state, tick, error or end, with its domain
// and attachment number. Replies and frames are written in the session's
// order on the one stream: an attach reply is written before any frame of
// its attachment, and no frame of an attachment is written after the detach
// reply that released it. The server does not order them itself: its
// request loop submits each exec to the session (session.Submit) and one
// writer loop forwards the session's ordered stream (session.Next), one
// message per event, so no lock is held across a statement and no
// attachment is tracked here. What the server answers without the session
// (names, a statement that does not parse, the session error of a broken
// protocol) is posted on that stream (session.Post), behind the answers
// before it; only the session error of an expired bound is written out of
// band, as it must reach a client whose stream is stalled. Each attached
// domain keeps the session's bounded delivery (one replaceable tick, newest
// state); replies and rows share the session's bounded lane, and a client
// that does not read holds the stream back through HTTP/2 flow control and
// then the session's requests, never a queue.
//
// A server that drains for a graceful shutdown (Drain) admits no new
// session; an open one finishes the statement it runs, runs no queued one,
// writes an end frame with reason NodeShutdown for each attachment it holds
// (session.EndAttachments, on the stream behind the last reply) and ends
// the stream once everything placed on it is written. The client attaches those clocks again on its next
// session, through another node.
//
// # Archives
//
// A remote client never names a server path: the archive of BACKUP,
// RESTORE and DESCRIBE BACKUP is the client's file and streams over the
// session. Their exec carries "archive":{"name":NAME,"bytes":N}, where NAME
// is the client's resolved file, used in messages only; the server never
// opens it, nor the statement's path literal. Without "archive" these
// statements are refused with the code archive_required, the same answer
// for every path, so nothing about the server's files is read or revealed.
//
// RESTORE and DESCRIBE BACKUP: the client sends the file's bytes first, as
// archive messages with the exec's id, each at most wire.ArchivePieceBytes of
// data (base64, so every line stays under wire.ClientMessageLimit), then the
// exec with bytes set to their total. The server gathers at most
// backup.MaxArchiveBytes (archive_too_large past it, and what arrived is
// dropped at once), spooling the pieces to a temporary file in
// Config.UploadDir that is unlinked as soon as it is made, so an upload
// costs memory only while its statement runs. It holds at most
// Config.MaxArchiveUploads uploads at once over all sessions, and
// Config.MaxArchiveUploadsPerIdentity of one identity (archive_busy
// beyond), and verifies the whole archive (backup.Decode) before anything
// of it is used. Pieces no exec claims are dropped when the next request
// arrives, and an upload whose exec has not arrived within
// Limits.UploadTimeout of its first piece is dropped and its slot freed
// (the exec, if it comes, gets archive_timeout).
//
// BACKUP: the exec carries "archive" with bytes 0 and no pieces. The server
// captures the archive and writes it back as archive messages with the
// exec's id, then the reply, which carries "archive":{"name":NAME,"bytes":N}.
// The client verifies the bytes and writes NAME itself. An archive or
// archive pieces on any other statement is an error.
//
// # Cluster requests
//
//	POST /v1/cluster/leave                      the serving node leaves
//	POST /v1/cluster/remove  {"node":"n3"}      remove a node
//
// Both answer {"message":...} or {"error":...} (at most 4 KiB is read). A
// node that left stops serving once its reply is sent.
//
// # Bounds
//
// Every connection has HandshakeTimeout to finish TLS (and, on HTTP/1.1,
// each request's headers) and is closed after IdleTimeout without an open
// request, so a client that completes TLS and the HTTP/2 preface and sends
// nothing is let go. At most Config.MaxSessions sessions run at once, and
// at most Limits.MaxSessionsPerIdentity of one identity (Server.Identity:
// the client certificate's identity, or the bearer token); a refused
// session is answered 503 or 429 before its stream starts.
//
// # Metrics
//
// /metrics serves the node's Prometheus registry (Engine.MetricsRegistry),
// in the text format or OpenMetrics as the scraper asks, to an
// authenticated client. The server adds nspl_sessions,
// nspl_sessions_opened_total and nspl_clock_attachments;
// nspl_session_refusals_total{reason="capacity|identity"},
// nspl_sessions_closed_total{reason=<session error code>} and
// nspl_connections_unserved_total{stage="handshake|request"},
// nspl_token_guesses_wrong_total and
// nspl_token_guesses_refused_total{scope="address|global"} for what the
// bounds refused. The node, and the cluster member around it, add theirs
// (per-domain gauges, ticks, progress, interconnect, commit latency, Go,
// process, build and raft series). The same registry is served without
// authentication on the node's separate metrics listener
// (node.Node.MetricsHandler), with /livez and /readyz.
//
// This package never follows a clock itself and never talks to other nodes:
// sessions are served from the serving node's own installation, and the
// interconnect belongs to the handler mounted under /v1/peer/.
package server
