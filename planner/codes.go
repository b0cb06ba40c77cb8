package planner

import "github.com/nspl-dev/nspl/wire"

// The code of the planner's one check, registered by its owner so that
// both sides of a remote session know it: the server, which plans the
// statements a client sends, and the client, which links no session.
func init() { wire.RegisterCode("non_positive_period", ErrNonPositivePeriod) }
