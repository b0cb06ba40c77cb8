package session

import "github.com/nspl-dev/nspl/wire"

// The codes a statement's failure travels under to a remote session: the
// session's own sentinels (ErrClosed is wire's, registered there). The
// grammar's are registered by package follow and the planner's by the
// planner, since a remote client, which links no session, receives them
// from the server that parses its statements.
func init() {
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
