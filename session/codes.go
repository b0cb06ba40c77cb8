package session

import (
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// The codes a statement's failure travels under to a remote session: the
// session's own sentinels (ErrClosed is wire's, registered there), and those
// of grammar and planner, which may not import wire themselves and whose
// failures reach a remote client only through a session.
func init() {
	wire.RegisterCode("syntax", grammar.ErrSyntax)
	wire.RegisterCode("invalid_duration", grammar.ErrInvalidDuration)
	wire.RegisterCode("invalid_timestamp", grammar.ErrInvalidTimestamp)
	wire.RegisterCode("invalid_rate", grammar.ErrInvalidRate)
	wire.RegisterCode("invalid_name", grammar.ErrInvalidName)
	wire.RegisterCode("invalid_path", grammar.ErrInvalidPath)
	wire.RegisterCode("non_positive_period", planner.ErrNonPositivePeriod)
	wire.RegisterCode("no_active_domain", ErrNoActiveDomain)
	wire.RegisterCode("not_in_transaction", ErrNotInTransaction)
	wire.RegisterCode("in_transaction", ErrInTransaction)
	wire.RegisterCode("nested_transaction", ErrNestedTransaction)
	wire.RegisterCode("transaction_full", ErrTransactionFull)
	wire.RegisterCode("transaction_expired", ErrTransactionExpired)
	wire.RegisterCode("already_attached", ErrAlreadyAttached)
	wire.RegisterCode("not_attached", ErrNotAttached)
	wire.RegisterCode("frame_too_large", ErrFrameTooLarge)
}
