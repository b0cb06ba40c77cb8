package interconnect

import (
	"errors"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// Sentinel errors of the interconnect.
var (
	// ErrForbidden: the caller presented no verified node certificate,
	// asked to act as a node it is not, or is not who the route admits (a
	// member, a voter forwarding a join); the message says which.
	ErrForbidden = errors.New("peer request refused")
	// ErrBadRequest: a request or response body is malformed, too large or
	// of the wrong type.
	ErrBadRequest = errors.New("malformed interconnect message")
	// ErrRemote: the peer failed the request for a reason that has no
	// sentinel of its own; the message says which.
	ErrRemote = wire.ErrRemote
	// ErrBusy: the caller already holds its share of the receiver's
	// waits; it tries again after one of them ends.
	ErrBusy = errors.New("peer is busy")
	// ErrUnreachable: the peer could not be reached or did not answer in
	// time.
	ErrUnreachable = errors.New("peer is unreachable")
)

// Error codes of the interconnect's own failures; catalog's sentinels
// travel under the codes catalog registers with wire.
const (
	CodeInvalidCommand = "invalid_command"
	CodeUnknownNode    = "unknown_node"
	CodeBadRequest     = "bad_request"
	CodeForbidden      = "forbidden"
	CodeBusy           = "busy"
	CodeInternal       = "internal"
)

// The codes of the interconnect's sentinels, and of the two lifecycle
// sentinels a peer refuses with (lifecycle may not import wire).
func init() {
	wire.RegisterCode(CodeInvalidCommand, lifecycle.ErrInvalidCommand)
	wire.RegisterCode(CodeUnknownNode, lifecycle.ErrUnknownNode)
	wire.RegisterCode(CodeBadRequest, ErrBadRequest)
	wire.RegisterCode(CodeForbidden, ErrForbidden)
	wire.RegisterCode(CodeBusy, ErrBusy)
}

// remoteErrorOf maps a local error to its wire form: wire's one remote
// error, whose Unwrap returns the sentinel its Code stands for, so the
// caller matches it with errors.Is exactly like a local error.
func remoteErrorOf(err error) *wire.RemoteError {
	re := &wire.RemoteError{Code: CodeInternal, Message: err.Error()}
	if code := wire.CodeOf(err); code != "" {
		re.Code = code
	}
	var nl *catalog.NotLeaderError
	if errors.As(err, &nl) {
		re.Code, re.Leader = wire.CodeOf(catalog.ErrNotLeader), nl.Leader
	}
	return re
}
