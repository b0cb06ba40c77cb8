package follow

import (
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// The codes the grammar's failures travel under. The grammar may import no
// package of this module, so it cannot register them itself; they are
// registered here, where a failure's wire form is (EncodeError,
// DecodeError), because both sides link this package: the server, which
// parses every statement a remote client sends, and the remote client,
// which must match the syntax error it gets back with grammar.ErrSyntax as
// a local parse's would, while linking no session.
func init() {
	wire.RegisterCode("syntax", grammar.ErrSyntax)
	wire.RegisterCode("invalid_duration", grammar.ErrInvalidDuration)
	wire.RegisterCode("invalid_timestamp", grammar.ErrInvalidTimestamp)
	wire.RegisterCode("invalid_rate", grammar.ErrInvalidRate)
	wire.RegisterCode("invalid_name", grammar.ErrInvalidName)
	wire.RegisterCode("invalid_path", grammar.ErrInvalidPath)
}
