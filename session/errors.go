package session

import (
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// Errors a session returns for statements it refuses itself. Catalog and
// lifecycle refusals keep their own types (*lifecycle.Error and the catalog
// sentinels); ExecText and Exec wrap every failure but ErrClosed in a
// *follow.StatementError that carries the statement's position, so callers
// test with errors.Is/As. Each sentinel carries its wire code
// (wire.NewSentinel), so a remote client matches it the same way.
var (
	// ErrNoActiveDomain: a statement that acts on the active domain ran
	// before USE.
	ErrNoActiveDomain = wire.NewSentinel("no_active_domain", "no active domain; USE <name> first")
	// ErrNotInTransaction: COMMIT or REVERT without an open transaction.
	ErrNotInTransaction = wire.NewSentinel("not_in_transaction", "no transaction is open; BEGIN one first")

	// ErrInTransaction: a statement that is never transaction content ran
	// while a transaction is open. The error is a *TransactionError.
	ErrInTransaction = wire.NewSentinel("in_transaction", "statement cannot be queued in a transaction")
	// ErrNestedTransaction: BEGIN while a transaction is open. The error is
	// a *TransactionError.
	ErrNestedTransaction = wire.NewSentinel("nested_transaction", "a transaction is already open")
	// ErrAlreadyAttached: ATTACH DOMAIN CLOCK for a domain the session
	// already follows. The error is an *AttachmentError. It is
	// follow.ErrAlreadyAttached, which a remote client names too.
	ErrAlreadyAttached = follow.ErrAlreadyAttached
	// ErrNotAttached: DETACH DOMAIN CLOCK for a domain the session does not
	// follow. The error is an *AttachmentError. It is follow.ErrNotAttached,
	// which a remote client names too.
	ErrNotAttached = follow.ErrNotAttached
	// ErrFrameTooLarge: an attach reply whose frame does not fit the
	// session's frame limit; nothing was attached.
	ErrFrameTooLarge = wire.NewSentinel("frame_too_large", "frame exceeds the session's frame limit")
	// ErrTransactionFull: a step that would take the open transaction past
	// the session's step or byte limit; it was not queued and the
	// transaction stays open. The error is a *TransactionLimitError.
	ErrTransactionFull = wire.NewSentinel("transaction_full", "transaction is full; COMMIT or REVERT it")
	// ErrTransactionExpired: the session's open transaction was idle past
	// the transaction idle timeout and was reverted; the statement that
	// found it did not run. The error is a *TransactionExpiredError.
	ErrTransactionExpired = wire.NewSentinel("transaction_expired", "idle transaction was reverted; BEGIN a new one")
	// ErrClosed: the session has ended. It is wire.ErrClosed, the one
	// closed error of the module, and is returned unpositioned: a closed
	// session refuses every statement alike.
	ErrClosed = wire.ErrClosed
)

// TransactionError is a statement refused because of the session's
// transaction: not allowed inside one (ErrInTransaction) or a nested BEGIN
// (ErrNestedTransaction).
type TransactionError struct {
	// Err is ErrInTransaction or ErrNestedTransaction.
	Err error
	// Statement names the refused statement, for example "CREATE DOMAIN".
	Statement string
	// Domain is the domain the open transaction is bound to.
	Domain string
	// Admin marks cluster administration (CORDON, UNCORDON, DRAIN NODE):
	// its message says it cannot be queued in a transaction.
	Admin bool
}

// Error returns the operator-facing message.
func (e *TransactionError) Error() string {
	if errors.Is(e.Err, ErrNestedTransaction) {
		return fmt.Sprintf("transaction is already active: a transaction on domain '%s' is open; COMMIT or REVERT it before BEGIN", e.Domain)
	}
	if e.Admin {
		return fmt.Sprintf("%s is cluster administration and cannot be queued in a transaction (open on domain '%s'); COMMIT or REVERT first, then run it on its own",
			e.Statement, e.Domain)
	}
	return fmt.Sprintf("%s cannot be queued in a transaction (open on domain '%s'); COMMIT or REVERT first",
		e.Statement, e.Domain)
}

// Unwrap returns the sentinel.
func (e *TransactionError) Unwrap() error { return e.Err }

// NoTransactionError is a COMMIT or REVERT (ROLLBACK) on a session with no
// open transaction. It matches ErrNotInTransaction.
type NoTransactionError struct {
	// Statement is "COMMIT" or "REVERT".
	Statement string
}

// Error returns the operator-facing message.
func (e *NoTransactionError) Error() string {
	return e.Statement + " requires an active transaction, and none is open on this session; BEGIN one first"
}

// Unwrap returns ErrNotInTransaction.
func (e *NoTransactionError) Unwrap() error { return ErrNotInTransaction }

// AttachmentError is an ATTACH or DETACH refused by the session's
// attachments: ErrAlreadyAttached or ErrNotAttached.
type AttachmentError struct {
	// Err is ErrAlreadyAttached or ErrNotAttached.
	Err error
	// Domain is the domain whose clock the statement named.
	Domain string
}

// Error returns the operator-facing message.
func (e *AttachmentError) Error() string {
	if errors.Is(e.Err, ErrAlreadyAttached) {
		return fmt.Sprintf("session already follows the clock of domain '%s'; DETACH DOMAIN CLOCK first", e.Domain)
	}
	return fmt.Sprintf("session does not follow the clock of domain '%s'; ATTACH DOMAIN CLOCK first", e.Domain)
}

// Unwrap returns the sentinel.
func (e *AttachmentError) Unwrap() error { return e.Err }

// Sentinels returns the package's coded sentinels, for the module's one
// code table (ErrClosed is wire's and the attachment sentinels follow's,
// listed there).
func Sentinels() []error {
	return []error{ErrNoActiveDomain, ErrNotInTransaction, ErrInTransaction, ErrNestedTransaction, ErrTransactionFull,
		ErrTransactionExpired, ErrFrameTooLarge, ErrReadNotConfirmed}
}
