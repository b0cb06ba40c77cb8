package interconnect

import (
	"errors"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/wire"
)

// Sentinel errors of the interconnect.
var (
	// ErrForbidden: the caller presented no verified node certificate,
	// asked to act as a node it is not, or is not who the route admits (a
	// member, a voter forwarding a join); the message says which.
	ErrForbidden = wire.NewSentinel(CodeForbidden, "peer request refused")
	// ErrBadRequest: a request or response body is malformed, too large or
	// of the wrong type.
	ErrBadRequest = wire.NewSentinel(CodeBadRequest, "malformed interconnect message")
	// ErrRemote: the peer failed the request for a reason that has no
	// sentinel of its own; the message says which.
	ErrRemote = wire.ErrRemote
	// ErrBusy: the caller already holds its share of the receiver's
	// waits; it tries again after one of them ends.
	ErrBusy = wire.NewSentinel(CodeBusy, "peer is busy")
	// ErrUnreachable: the peer could not be reached or did not answer in
	// time.
	ErrUnreachable = errors.New("peer is unreachable")
)

// Error codes of the interconnect's own failures. Catalog's and lifecycle's
// sentinels travel under their own codes (wire.Coded).
const (
	CodeBadRequest = "bad_request"
	CodeForbidden  = "forbidden"
	CodeBusy       = "busy"
	CodeInternal   = "internal"
)

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error { return []error{ErrForbidden, ErrBadRequest, ErrBusy} }

// remoteErrorOf maps a local error to its wire form: wire's one remote
// error, which matches the sentinel its Code names, so the
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
