package runtime

import "github.com/nspl-dev/nspl/wire"

// The codes runtime's sentinels travel under to remote sessions.
func init() {
	wire.RegisterCode("domain_missing", ErrDomainMissing)
	wire.RegisterCode("domain_stopped", ErrDomainStopped)
	wire.RegisterCode("clock_unavailable", ErrClockUnavailable)
	wire.RegisterCode("clock_overflow", ErrClockOverflow)
	wire.RegisterCode("tick_overflow", ErrTickOverflow)
	wire.RegisterCode("cannot_schedule", ErrCannotSchedule)
}
