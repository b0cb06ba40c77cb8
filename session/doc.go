// Package session runs statements for one client: the active domain, an open
// transaction, an ordered lane of requests and the clock attachments, and
// it yields one ordered stream of their replies and frames. The shell, the
// script runner, the embedded API, the network server and the console are
// all consumers of a session.
//
// Using it as a stream, the way the server, the console and the embedded
// nspl.Session do:
//
//	s := session.New(n, session.Options{})   // n is an Engine, such as a *node.Node
//	defer s.Close()
//	err := s.Submit(ctx, session.Request{ID: 1, Plan: planner.Attach{}})
//	ev, err := s.Next(ctx)                   // the reply, then the attachment's frames
//
// or synchronously, for a caller that reads no frames or reads them apart:
//
//	results, err := s.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
//	f, err := s.NextFrame(ctx)              // state, tick, error and end frames
//
// The stream (stream.go) is the control lane (lane.go) read whole: Submit
// runs a request on the request lane, on the caller's goroutine, and places
// its reply there before the lane passes to the next request; Next is its
// one reader and returns replies, rows chunks, frames and posts in the order
// the delivery rules give. So the order of a reply and the frames around it
// is decided in one place, the lane, with the attachment bookkeeping beside
// it: an attach places its reply before its delivery starts and fills it as
// the request ends (the reader waits at a reply not yet filled), a detach
// withdraws its attachment's unread frames before its reply is placed and
// the reply names the released domain (Event.Released), and a reply carries
// the session's state as the request left it (Event.State). A consumer
// forwards the stream and keeps no bookkeeping of its own: what it answers
// besides the session's replies it places with Post, behind what is
// queued, and a server that drains ends the attachments with
// EndAttachments. Replies, rows and posts wait for room on the lane as
// state frames do, so a reader that falls behind holds the requests back
// instead of the stream growing. Why one lane and not a channel per kind:
// the rule a client relies on is an order across kinds (the reply before
// its first frame, nothing of a detached attachment after its reply), which
// a single queue holds by construction and several queues would have to
// rebuild at every consumer, as the server, the console and the embedded
// API each did before. Submit runs on the caller's goroutine rather than a
// request goroutine of the session's, so a session still owns no goroutine
// until it attaches a clock.
//
// Exec runs a request on the same request path (serve) and returns its
// reply to its caller instead; an attach's reply keeps its place in the
// stream, which NextFrame passes over, as Next passes over those places.
// A session is read either by Next (with Submit) or by NextFrame (with
// Exec), not both.
//
// A session runs on an Engine (engine.go), the few operations of a serving
// node its statements use; *node.Node implements it, and this package does
// not import node. The Engine's writes take lifecycle requests, which the
// session builds from its plans (planner.Start.Request, planner.Step), so a
// node never sees a plan. Results, result sets and frames are wire's
// types; what a reader of them needs (the followed clock and its
// arithmetic, the coalescing follow, the attach bookkeeping of a receiver,
// operator rendering, the statement error and its wire form) is package follow's,
// shared with the remote client, which links no session. Statement text runs through
// planner.RunScript, the one loop over planned statements.
//
// Requests run one at a time (Submit, Exec, ExecText). Every failure is a
// *follow.StatementError at the statement's position (for text that does
// not parse, at the offending token, its *grammar.Error wrapped whole),
// whose Kind is the typed cause:
// this package's sentinels and *TransactionError / *AttachmentError, a
// *lifecycle.Error, or a catalog or context error. The one exception is
// ErrClosed (wire.ErrClosed), returned bare by every call on a closed
// session and by a request the session's Close ended: it is the session's
// state, not the statement's, so it carries no position.
//
// Transactions: BEGIN binds to the existing active domain; START, STOP and
// ALTER DOMAIN SET PLACEMENT are queued; COMMIT applies them as one catalog
// command and ends the transaction whatever the outcome; REVERT (ROLLBACK)
// discards them. Each step is preflighted as it is queued (the Engine's
// PreflightTransaction): the queued steps and the new one are resolved and
// applied, with the transitions COMMIT applies, to a copy of the domain's
// committed state, and a step that cannot follow is refused with the error
// COMMIT would give for it now, the *lifecycle.Error naming its step
// ("transaction step 2 (start): domain 'prod' is already running; …"),
// while the transaction stays open with the steps before it. A committed
// change made meanwhile by another session counts: when it leaves an earlier
// step unable to apply, that step's error refuses the new one. COMMIT
// validates again against the state committed by then. A transaction is
// bounded (transaction.go): a step that would pass the session's step or
// byte limit (Options.MaxTransactionSteps, MaxTransactionBytes of canonical
// statement text) is refused with a *TransactionLimitError
// (ErrTransactionFull) before its preflight, so the limit also bounds the
// preflight's work, and the transaction stays open. A transaction whose
// session runs no statement for longer than Options.TransactionIdleTimeout
// is reverted by the next statement, which reports ErrTransactionExpired
// and does not run; the check is made as each request starts, from the
// session's time source, and arms no timer. SHOW TRANSACTIONS lists the
// session's own open transaction (domain, steps, bytes, age), at most one
// row: transactions live in their sessions until COMMIT, so a session never
// sees another's. CREATE DOMAIN, DROP DOMAIN, USE, DESCRIBE DOMAIN, ATTACH and
// DETACH are refused inside, as is a nested BEGIN, and so are BACKUP,
// RESTORE and DESCRIBE BACKUP (backup.go). Their archives are written and
// read through Options.Archives (archives.go): files on this machine for an
// embedded session, the client's own files for a remote one, so the node
// never opens a path a remote client names. DESCRIBE BACKUP reads the
// archive only and never touches the node. CORDON, UNCORDON and DRAIN
// NODE (maintenance.go) are cluster administration: refused inside with a
// message saying they cannot be queued in a transaction, and run through
// the engine's Maintainer.
//
// Attachments follow the delivery contract of the domain clock: an attach
// waits for the node's first installation of the committed domains (a
// request cancelled meanwhile keeps its place on the lane until then and
// attaches nothing), its reply carries the observed clock, and the reply
// takes its place in the control lane, the session's one ordered stream,
// before any frame of the attachment: the accepted tick of the reply's
// generation is queued behind it, and the delivery task starts as the
// attachment joins its domain's fan-out, just before the request ends. A
// reader of Next takes the reply first; NextFrame passes over reply
// places, so a frame of the attachment may be taken before Exec returns
// its reply. The task sends a state frame
// only when the observation differs from the one the client last received,
// a tick only of the generation the client last received as paced, and
// withdraws an untaken tick before a changed state. The ticks themselves are
// delivered by one loop per installed domain (tickfanout.go), shared by every
// attachment of it in the process, so a tick wakes that loop and the
// consumers, not every delivery task. A task runs only while there is a
// state, error or end frame to deliver: that loop starts it when the
// installation or the failure changes and it ends once caught up, so an
// idle attachment holds no goroutine. Each attachment holds one
// replaceable tick slot in the control lane, so a slow consumer receives the
// newest tick and never a backlog; state and end frames wait for room in a
// bounded queue. A removed domain ends the attachment with one DomainRemoved
// end frame, after marking it ending, so a later attach serves a new
// attachment and a later detach reports it not attached. Detach stops the
// task, waits for it and withdraws the attachment's unread frames before its
// reply is placed, so no frame of the domain follows its reply. A frame over the
// frame limit is logged and skipped. Close stops every task without a frame.
//
// A session never reads the wall clock: the serving node's reading in a tick
// frame comes from the runtime's watermarked read of the installed
// generation. It must never persist an attachment or talk to other nodes.
package session
