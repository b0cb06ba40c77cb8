package nspl

import (
	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// Error is a statement's positioned error: Exec and ExecText return one for
// the statement that failed, with its line and column in the text, and
// errors.Is matches it with the sentinel below that classifies it. It is
// the one statement error of the module (follow.StatementError): an
// embedded session, a server's session and the remote client return it
// alike, the client rebuilding it from the server's wire error, and it
// wraps text that does not parse (a *grammar.Error, whose own position it
// takes) as well as a refusal or an execution failure. A closed engine,
// session or client is no statement's failure: its ErrClosed comes bare,
// without an Error around it.
type Error = follow.StatementError

// Position is a line and column (both one-based) in statement text.
type Position = grammar.Position

// Sentinel errors. Every refusal an engine or a remote client returns for a
// statement, and every call on a closed engine, session or client
// (ErrClosed), matches exactly one of them with errors.Is, so a caller needs
// no other package to tell them apart. Failures that are no refusal match
// none: the context's error of a statement cancelled before it ran, and a
// remote client's transport failures (client.ErrConnectionLost,
// *client.ConnectError). They are the values the packages that raise them
// use, not copies: errors.Is matches either name. Each that a server may
// refuse with carries its wire code (wire.Coded), so a remote client's
// error, rebuilt from the code the server sent, matches the same sentinel
// and no other; ErrDataDir, ErrNotReadable and ErrOverflow never cross the
// wire (a data directory is the embedding process's, and a followed
// clock's arithmetic runs where it is read).
var (
	// ErrClosed: the engine, the session or the remote client is closed,
	// or the server's session or node closed under a remote statement. It
	// is the one closed error of the module (wire.ErrClosed, which node,
	// session and client name ErrClosed too), and it is never positioned:
	// Exec and ExecText return it bare, since being closed is no
	// statement's fault.
	ErrClosed = wire.ErrClosed

	// ErrDomainExists: CREATE DOMAIN of a name already in the catalog.
	ErrDomainExists = lifecycle.ErrDomainExists
	// ErrNotFound: the named domain is not in the catalog.
	ErrNotFound = lifecycle.ErrDomainNotFound
	// ErrDomainRunning: DROP DOMAIN of a running domain; STOP it first.
	ErrDomainRunning = lifecycle.ErrDomainRunning
	// ErrAlreadyRunning: START of a running domain, including START AT NOW
	// after reopening a DataDir whose domain was running: the engine
	// resumed it, so attach to it, or STOP it first for a new generation.
	ErrAlreadyRunning = lifecycle.ErrAlreadyRunning
	// ErrAlreadyStopped: STOP of a stopped domain.
	ErrAlreadyStopped = lifecycle.ErrAlreadyStopped
	// ErrInvalidPeriod: a paced domain with PERIOD 0, or an unpaced
	// domain given a PERIOD or SKEW.
	ErrInvalidPeriod = lifecycle.ErrInvalidPeriod
	// ErrNoLiveVoter: a paced START found no node to own its clock.
	ErrNoLiveVoter = lifecycle.ErrNoLiveVoter
	// ErrDomainLimit: a CREATE DOMAIN or RESTORE that would take the
	// catalog past its limit of domains (Options.MaxDomains, nspl serve
	// --max-domains).
	ErrDomainLimit = lifecycle.ErrDomainLimit

	// ErrNoActiveDomain: a statement that needs an active domain ran
	// before USE.
	ErrNoActiveDomain = session.ErrNoActiveDomain
	// ErrAlreadyAttached: ATTACH of a clock the session already follows.
	ErrAlreadyAttached = session.ErrAlreadyAttached
	// ErrNotAttached: DETACH of a clock the session does not follow.
	ErrNotAttached = session.ErrNotAttached
	// ErrInTransaction: a statement not allowed inside BEGIN … COMMIT.
	ErrInTransaction = session.ErrInTransaction
	// ErrNotInTransaction: COMMIT or REVERT with no open transaction.
	ErrNotInTransaction = session.ErrNotInTransaction
	// ErrNestedTransaction: BEGIN inside an open transaction.
	ErrNestedTransaction = session.ErrNestedTransaction
	// ErrTransactionFull: a transaction holding as many steps or bytes as
	// it may.
	ErrTransactionFull = session.ErrTransactionFull
	// ErrTransactionExpired: the open transaction idled past its timeout
	// and was reverted.
	ErrTransactionExpired = session.ErrTransactionExpired
	// ErrFrameTooLarge: a reply larger than Options.FrameLimit.
	ErrFrameTooLarge = session.ErrFrameTooLarge

	// ErrSyntax: text that is not a statement of the language.
	ErrSyntax = grammar.ErrSyntax
	// ErrInvalidName: a domain name that is empty, longer than 128 bytes,
	// or holds a character other than ASCII letters, digits, '-', '_' and
	// '~'.
	ErrInvalidName = grammar.ErrInvalidName
	// ErrInvalidPattern: a LIST DOMAINS LIKE pattern that is empty,
	// longer than 256 bytes, holds a character no domain name holds, or
	// ends in a lone backslash.
	ErrInvalidPattern = grammar.ErrInvalidPattern
	// ErrInvalidDuration: a malformed or out-of-range duration.
	ErrInvalidDuration = grammar.ErrInvalidDuration
	// ErrInvalidTimestamp: a timestamp that is not RFC 3339 or lies
	// outside signed Unix nanoseconds (years 1677 to 2262).
	ErrInvalidTimestamp = grammar.ErrInvalidTimestamp
	// ErrInvalidRate: a TIME RATE that is not a positive finite number.
	ErrInvalidRate = grammar.ErrInvalidRate
	// ErrInvalidPath: a BACKUP, RESTORE or DESCRIBE BACKUP path that is
	// empty or holds a NUL byte.
	ErrInvalidPath = grammar.ErrInvalidPath

	// ErrNotReadable: a followed clock with no readable time (stopped or
	// not installed), or with no admission window (not paced).
	ErrNotReadable = clock.ErrNotReadable
	// ErrOverflow: a projection, wait or window whose result leaves the
	// range of signed Unix nanoseconds (time.Time between 1677 and 2262)
	// or of time.Duration.
	ErrOverflow = clock.ErrOverflow
	// ErrClockOverflow: a ClockEvent.Failure reporting that the domain's
	// clock left the signed Unix-nanosecond range at its authority.
	ErrClockOverflow = clockrt.ErrClockOverflow

	// ErrDataDir: Options.DataDir cannot be used (locked by another
	// process, unwritable, or holding an unreadable node identity).
	ErrDataDir = catalog.ErrDataDir
	// ErrOutcomeUnknown: a write whose commit could not be confirmed;
	// check the domain's state before retrying it.
	ErrOutcomeUnknown = catalog.ErrOutcomeUnknown
	// ErrTimeout: a write the catalog did not accept before its context
	// ended; it was not proposed, so retry it or allow more time.
	ErrTimeout = catalog.ErrTimeout
)
