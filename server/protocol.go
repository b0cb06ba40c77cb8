package server

import "github.com/nspl-dev/nspl/wire"

// Sentinel errors of the protocol, wire's own: both ends refuse with them.
var (
	ErrMessageTooLarge = wire.ErrMessageTooLarge
	ErrProtocol        = wire.ErrProtocol
	ErrRequestOrder    = wire.ErrRequestOrder
	ErrSessionIdle     = wire.ErrSessionIdle
	ErrMessageTimeout  = wire.ErrMessageTimeout
	ErrArchiveRequired = wire.ErrArchiveRequired
	ErrArchiveBusy     = wire.ErrArchiveBusy
	ErrArchiveTimeout  = wire.ErrArchiveTimeout
)
