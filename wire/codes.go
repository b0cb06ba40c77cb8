package wire

import (
	"errors"
	"fmt"
)

// ErrRemote: the other side failed a request for a reason that has no
// registered code; the message says which.
var ErrRemote = errors.New("remote request failed")

// code is one row of the error-code table.
type code struct {
	name    string
	err     error
	encodes bool // false for an alias accepted on decode only
}

// table is the one error-code table. It is filled during package
// initialisation only (RegisterCode, RegisterAlias) and read-only after, so
// lookups take no lock.
var table []code

// RegisterCode enters code as the wire name of sentinel: a failure that
// errors.Is sentinel is sent as code, and a received code unwraps to
// sentinel. The package that owns sentinel calls it from an init function;
// a code registered twice for different sentinels panics, since the table
// would otherwise depend on initialisation order.
func RegisterCode(name string, sentinel error) { register(name, sentinel, true) }

// RegisterAlias enters an older spelling of a registered sentinel's code:
// it is accepted on decode and never sent.
func RegisterAlias(name string, sentinel error) { register(name, sentinel, false) }

func register(name string, sentinel error, encodes bool) {
	if name == "" || sentinel == nil {
		panic("wire: RegisterCode needs a code and a sentinel")
	}
	for _, c := range table {
		if c.name == name {
			if c.err != sentinel {
				panic(fmt.Sprintf("wire: error code %q registered for two sentinels", name))
			}
			return
		}
	}
	table = append(table, code{name: name, err: sentinel, encodes: encodes})
}

// CodeOf returns the code of the first registered sentinel err matches, in
// registration order, or "" when it matches none. Registered sentinels are
// distinct failures, so an error matches at most one in practice.
func CodeOf(err error) string {
	for _, c := range table {
		if c.encodes && errors.Is(err, c.err) {
			return c.name
		}
	}
	return ""
}

// Sentinel returns the sentinel registered for code, or nil.
func Sentinel(name string) error {
	for _, c := range table {
		if c.name == name {
			return c.err
		}
	}
	return nil
}

// RemoteError is a failure the other side of a connection reported: its
// code, its message and, for a not-leader refusal between nodes, the leader
// the peer knows of. Unwrap returns the sentinel registered for Code, or
// ErrRemote for a code this side does not know, so callers match a remote
// failure with errors.Is exactly like a local one.
type RemoteError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Leader and LeaderAPIAddr name the leader the peer knows of, for
	// not_leader between nodes.
	Leader        string `json:"leader,omitempty"`
	LeaderAPIAddr string `json:"leader_api_addr,omitempty"`
}

// Error returns the remote message.
func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the sentinel of Code, or ErrRemote.
func (e *RemoteError) Unwrap() error {
	if err := Sentinel(e.Code); err != nil {
		return err
	}
	return ErrRemote
}
