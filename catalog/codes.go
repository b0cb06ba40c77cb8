package catalog

import "github.com/nspl-dev/nspl/wire"

// The codes catalog's sentinels travel under, between nodes and to remote
// sessions. Older nodes spelled the timeout and shutdown codes without the
// catalog_ prefix; those spellings are still understood.
func init() {
	wire.RegisterCode("not_leader", ErrNotLeader)
	wire.RegisterCode("leadership_unconfirmed", ErrLeadershipUnconfirmed)
	wire.RegisterCode("outcome_unknown", ErrOutcomeUnknown)
	wire.RegisterCode("catalog_timeout", ErrTimeout)
	wire.RegisterCode("catalog_shutdown", ErrShutdown)
	wire.RegisterAlias("timeout", ErrTimeout)
	wire.RegisterAlias("shutdown", ErrShutdown)
}
