// Package console is nspl's web console: a browser's view of the domains,
// the cluster and live domain clocks, served under /console/ on a node's
// API listener (server.Config.Console; nspl serve --console, on by
// default) or by an embedded shell on loopback (nspl --console ADDR).
//
// It is one more consumer of the session contract: every page's data comes
// from a session.Session on the serving node, running the same statements
// the shell runs (LIST DOMAINS, DESCRIBE DOMAIN, SHOW CLUSTER STATUS, USE
// and ATTACH DOMAIN CLOCK), and the statement box runs NSPL text in a
// session of its own. Pages are rendered on the server with html/template
// from embedded assets (no CDN, no build step); a small script keeps them
// live over Server-Sent Events.
//
// DESIGN.md places the console in server; it is a package of its own so
// that the protocol server and the console's pages, assets and logins stay
// apart. server mounts it (server.Config.Console) and lends it the
// server's admission of sessions and its credentials (console.Host, the
// token, the client-certificate check).
//
// # Routes and who may call them
//
//	GET  /console/static/…   anyone: the script and the style sheet
//	GET  /console/login      anyone: the login form
//	POST /console/login      anyone holding the bearer token, same origin
//	GET  /console/           the domains page (?domain=NAME selects one)
//	GET  /console/cluster    the cluster page
//	GET  /console/api/whoami the caller's identity and CSRF token
//	GET  /console/api/watch  event stream of the views (?domain=NAME)
//	GET  /console/api/clock  event stream of one attachment (?domain=NAME)
//	GET  /console/api/repl   event stream of a statement-box session
//	POST /console/api/exec   run statements in the caller's statement box
//	POST /console/api/domain a lifecycle button: start, stop or drop a domain
//	GET  /console/api/metrics a sample of the node's metrics for the charts
//	POST /console/logout     end the caller's login
//
// A page asked for without a login is sent to the login form with itself
// as ?next=, which the form posts back; a login returns only to one of the
// console's pages on this origin (loginTarget), never to another site.
//
// Every route but the first three needs an authenticated caller: a
// verified client certificate of the cluster CA (admitted directly, as the
// API admits it), a login cookie, or, on an insecure loopback listener
// without a token only, anyone. A node certificate is refused. The
// state-changing POSTs also need the caller's CSRF token (the X-CSRF-Token
// header or a csrf form field) and a same-origin request (Sec-Fetch-Site,
// or Origin where a browser sends no Sec-Fetch-Site). The event streams,
// the metrics sample and whoami need a same-origin request too, whoever the caller is: a
// browser presents its client certificate to any site's request, so a
// certificate is no sign that the console's own page asked. Against DNS
// rebinding, which makes another site's page same-origin with a loopback
// listener, the server answers such a listener only under a loopback Host
// or a configured name (server's hosts.go, nspl serve --allowed-host).
//
// # Logins
//
// Logging in with the node's bearer token sets an HttpOnly,
// SameSite=Strict cookie, Secure and named __Host-nspl_console over TLS,
// that lasts DefaultLoginLifetime. The cookie is a random login id and its
// expiry, signed with HMAC-SHA256 under a key the server derives from the
// node's TLS key and the token, so a login survives a restart of the node
// and a new token ends every login of the old one. The CSRF token is a MAC
// of the login id (or of the certificate identity), so it needs no
// storage. Logging out refuses the login id until it would have expired,
// ends the login's statement sessions at once and its other streams at
// their next heartbeat. `nspl serve` keeps the refusals in its data
// directory (console-logouts.json), so a copied cookie of a logged-out
// login stays refused across a restart; a node without a data directory
// keeps them in memory. At most MaxLogouts are held: one more logout ends
// every login issued before it. Every login's token is checked and counted
// in one step by Config.Guesses, the listener's one guess limiter (package
// guesslimit), which its bearer checks share: an address prefix that sent
// ten wrong tokens within a minute is answered 429 with Retry-After for
// the rest of that minute, the right token too, and all addresses together
// have a global ceiling that spares addresses that logged in before.
//
// # Sessions and bounds
//
// Each event stream is one session, admitted through the Host (the API
// server): it counts in the server's MaxSessions and in the caller's
// per-identity share, and ends when the server drains or closes, when the
// login ends, or when a heartbeat (every HeartbeatInterval) cannot be
// written. A login holds at most MaxReplSessions statement sessions; a
// submission is at most MaxStatementBytes of text, runs at most
// MaxSubmissionStatements statements and answers at most MaxReplyBytes of
// outcomes, each written to the answer (and the stream) as its statement
// is answered; a submission stopped at a bound ends with a "cut" that
// names the statement, its position and the bound (submission.go). Nothing a browser sends names a
// file on the server: BACKUP, RESTORE and DESCRIBE BACKUP are refused with
// ErrArchiveNotServed.
//
// # Event streams
//
// Every stream starts with "hello" (node, identity, the node's UTC in
// nanoseconds and, for a statement box, the key its submissions name) and
// carries "utc" heartbeats. A watch stream sends "views" (the domain list,
// the selected domain's DESCRIBE DOMAIN and SHOW CLUSTER STATUS, the list
// and the status laid out for people by cluster.go: cells rendered, nulls
// empty, long ids shortened, the status's columns read by name) at once,
// after every installation and every RefreshInterval, whenever they
// changed; the page rebuilds the domain list, the description and the
// cluster table only when what each shows changed, so views that changed
// only the cluster status leave the list's links, and a click on one in
// progress, in place. A clock stream sends "attached" with the observed clock (or
// "refused"), then each "frame" of that attachment (state, tick, error,
// end). A statement box stream sends each statement's "outcome" (reply,
// result table, warnings, or an error with its line, column, source line
// and caret) and "frame"s of its attachments in the session's order, and
// "state" after each submission.
//
// Both are the session's ordered stream forwarded (session.Submit and
// session.Next), as the server's session protocol is: the clock stream
// submits USE and ATTACH and forwards what follows; a statement box
// submits its statements one at a time, and its stream's loop sends each
// outcome in its place among the frames and hands it back to the
// submission, which writes its answer and decides whether to go on. The
// console keeps no attachment of its own and holds no lock across a
// statement: the session places a detach's reply after its attachment's
// last frame. The watch stream reads its views with the session's
// synchronous Exec, as it follows no clock.
//
// Instants and durations are decimal strings of nanoseconds, which the page
// computes with BigInt: a JavaScript number holds integers exactly only to
// 2^53, about 104 days of nanoseconds. The time rate comes as the exact
// fraction rate_num/rate_den of its float64, so the page's projection
// floor(elapsed × rate_num / rate_den), every 250 ms against the node's UTC
// learnt from the heartbeats, is the node's own to the nanosecond.
//
// # Reconnection
//
// A page whose stream fails shows OFFLINE, marks its clock interrupted,
// and opens the stream again with backoff (250 ms doubling to 5 s); once
// the node answers, it attaches its clock again and opens a new statement
// session, as the remote shell does.
package console
