package interconnect

import (
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
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
	ErrRemote = errors.New("peer request failed")
	// ErrUnreachable: the peer could not be reached or did not answer in
	// time.
	ErrUnreachable = errors.New("peer is unreachable")
)

// Error codes on the wire.
const (
	CodeNotLeader             = "not_leader"
	CodeLeadershipUnconfirmed = "leadership_unconfirmed"
	CodeOutcomeUnknown        = "outcome_unknown"
	CodeTimeout               = "timeout"
	CodeShutdown              = "shutdown"
	CodeInvalidCommand        = "invalid_command"
	CodeUnknownNode           = "unknown_node"
	CodeBadRequest            = "bad_request"
	CodeForbidden             = "forbidden"
	CodeInternal              = "internal"
)

// RemoteError is an error a peer answered with. Unwrap returns the sentinel
// its Code stands for (catalog.ErrNotLeader for not_leader, and so on), so
// callers match it with errors.Is exactly like a local error.
type RemoteError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Leader and LeaderAPIAddr name the leader the peer knows of, for
	// not_leader.
	Leader        string `json:"leader,omitempty"`
	LeaderAPIAddr string `json:"leader_api_addr,omitempty"`
}

// Error returns the peer's message.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("peer: %s", e.Message)
}

// Unwrap returns the sentinel of Code.
func (e *RemoteError) Unwrap() error {
	switch e.Code {
	case CodeNotLeader:
		return catalog.ErrNotLeader
	case CodeLeadershipUnconfirmed:
		return catalog.ErrLeadershipUnconfirmed
	case CodeOutcomeUnknown:
		return catalog.ErrOutcomeUnknown
	case CodeTimeout:
		return catalog.ErrTimeout
	case CodeShutdown:
		return catalog.ErrShutdown
	case CodeInvalidCommand:
		return lifecycle.ErrInvalidCommand
	case CodeUnknownNode:
		return lifecycle.ErrUnknownNode
	case CodeBadRequest:
		return ErrBadRequest
	case CodeForbidden:
		return ErrForbidden
	}
	return ErrRemote
}

// remoteErrorOf maps a local error to its wire form.
func remoteErrorOf(err error) *RemoteError {
	re := &RemoteError{Code: CodeInternal, Message: err.Error()}
	var nl *catalog.NotLeaderError
	switch {
	case errors.As(err, &nl):
		re.Code, re.Leader = CodeNotLeader, nl.Leader
	case errors.Is(err, catalog.ErrNotLeader):
		re.Code = CodeNotLeader
	case errors.Is(err, catalog.ErrLeadershipUnconfirmed):
		re.Code = CodeLeadershipUnconfirmed
	case errors.Is(err, catalog.ErrOutcomeUnknown):
		re.Code = CodeOutcomeUnknown
	case errors.Is(err, catalog.ErrTimeout):
		re.Code = CodeTimeout
	case errors.Is(err, catalog.ErrShutdown):
		re.Code = CodeShutdown
	case errors.Is(err, lifecycle.ErrInvalidCommand):
		re.Code = CodeInvalidCommand
	case errors.Is(err, lifecycle.ErrUnknownNode):
		re.Code = CodeUnknownNode
	case errors.Is(err, ErrBadRequest):
		re.Code = CodeBadRequest
	case errors.Is(err, ErrForbidden):
		re.Code = CodeForbidden
	}
	return re
}
