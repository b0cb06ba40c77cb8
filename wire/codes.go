package wire

import (
	"errors"
	"slices"
)

// ErrRemote: the other side of a connection reported the failure. Every
// *RemoteError and *ClockFailure matches it, besides the sentinel its code
// names, so a caller that only needs to know a failure was the peer's
// tests for ErrRemote; a code this side names no sentinel for matches
// ErrRemote alone, and the message says what failed.
var ErrRemote = errors.New("remote request failed")

// Coded is an error that names the stable code it crosses the wire under.
// Every sentinel a peer may refuse with implements it: the ones NewSentinel
// makes, and those of grammar and record, the leaf packages that may not
// import wire, which implement the one method themselves. The code is the
// sentinel's identity on the wire: a *RemoteError or *ClockFailure carrying
// it matches that sentinel with errors.Is, so neither side needs a table
// to encode or to decode a failure.
type Coded interface {
	error
	// ErrorCode returns the code, never empty for a sentinel.
	ErrorCode() string
}

// sentinel is the coded error value NewSentinel makes.
type sentinel struct {
	code    string
	msg     string
	aliases []string // older spellings of code, accepted on decode only
}

// NewSentinel returns a sentinel error whose message is msg and whose wire
// code is code. aliases are older spellings of code: a remote failure
// under one of them matches the sentinel too, and none of them is ever
// sent. A package declares each sentinel it refuses peers with this way,
// in its documented var block, and lists them in its Sentinels function
// for the module's one code table (see the package doc). NewSentinel
// panics on an empty code, since such a sentinel could not be told from
// an uncoded failure on the wire.
func NewSentinel(code, msg string, aliases ...string) error {
	if code == "" || slices.Contains(aliases, "") {
		panic("wire: NewSentinel needs a code")
	}
	return &sentinel{code: code, msg: msg, aliases: aliases}
}

// Error returns the sentinel's message.
func (s *sentinel) Error() string { return s.msg }

// ErrorCode returns the sentinel's wire code.
func (s *sentinel) ErrorCode() string { return s.code }

// Aliases returns the older spellings of s's code that still decode to it.
func (s *sentinel) Aliases() []string { return slices.Clone(s.aliases) }

// CodeOf returns the code err crosses the wire under: that of the first
// Coded error in its chain (in errors.As order, outermost first), or ""
// when the chain holds none. A *RemoteError relayed on keeps its code.
func CodeOf(err error) string {
	var c Coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// AliasesOf returns the older spellings of a coded sentinel's code that
// still decode to it (none for most).
func AliasesOf(err error) []string {
	if a, ok := err.(interface{ Aliases() []string }); ok {
		return a.Aliases()
	}
	return nil
}

// codeNames reports whether code names target: target is ErrRemote, or a
// coded error whose code, or one of whose older spellings, is code.
func codeNames(code string, target error) bool {
	if target == ErrRemote {
		return true
	}
	c, ok := target.(Coded)
	if !ok || code == "" {
		return false
	}
	return c.ErrorCode() == code || slices.Contains(AliasesOf(c), code)
}

// RemoteError is a failure the other side of a connection reported: its
// code, its message and, for a not-leader refusal between nodes, the leader
// the peer knows of. It matches with errors.Is the sentinel its Code
// names, whichever package declares it, and ErrRemote, so callers match a
// remote failure exactly like a local one.
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

// ErrorCode returns Code, so a remote failure relayed on keeps its code.
func (e *RemoteError) ErrorCode() string { return e.Code }

// Is reports whether Code names target (see Coded), or target is ErrRemote.
func (e *RemoteError) Is(target error) bool { return codeNames(e.Code, target) }
