package record

import (
	"errors"
	"slices"
)

// Sentinel errors of the lifecycle transitions. Every error package
// lifecycle returns is an *Error whose Unwrap yields exactly one of these,
// so callers test with errors.Is even after the error has crossed an
// encoding boundary (only the Code travels; the sentinel is recovered from
// it). Each sentinel's Code is also the code it crosses the wire under
// (ErrorCode, package wire's Coded): a lifecycle refusal travels under its
// own code, like every other sentinel of the module.
var (
	// ErrDomainExists: CREATE of a name that is already in the catalog.
	ErrDomainExists = newSentinel(CodeDomainExists, "domain already exists")
	// ErrDomainNotFound: the named domain is not in the catalog.
	ErrDomainNotFound = newSentinel(CodeDomainNotFound, "domain does not exist")
	// ErrDomainRunning: DROP of a running domain.
	ErrDomainRunning = newSentinel(CodeDomainRunning, "domain is running")
	// ErrAlreadyRunning: START of a running domain.
	ErrAlreadyRunning = newSentinel(CodeAlreadyRunning, "domain is already running")
	// ErrAlreadyStopped: STOP of a stopped domain.
	ErrAlreadyStopped = newSentinel(CodeAlreadyStopped, "domain is already stopped")
	// ErrNoLiveVoter: a paced START found no eligible authority.
	ErrNoLiveVoter = newSentinel(CodeNoLiveVoter, "no live voter is available to own the clock")
	// ErrAuthorityConflict: a compare-and-set reassignment whose expected
	// generation, status, pace or fence no longer matches the domain.
	ErrAuthorityConflict = newSentinel(CodeAuthorityConflict, "authority compare-and-set conflict")
	// ErrUnknownNode: a node name or incarnation that is not registered.
	ErrUnknownNode = newSentinel(CodeUnknownNode, "node is not registered")
	// ErrInvalidPeriod: a paced domain with PERIOD 0, or an unpaced domain
	// given a PERIOD or SKEW.
	ErrInvalidPeriod = newSentinel(CodeInvalidPeriod, "invalid period")
	// ErrInvalidCommand: a command whose values are malformed (empty name,
	// out-of-range enum, rate that is not positive and finite, unknown op,
	// wrong payload). It indicates a bug in the proposer.
	ErrInvalidCommand = newSentinel(CodeInvalidCommand, "invalid command")
	// ErrDomainLimit: a CREATE or a restore that would take the catalog
	// past the node's limit on domains (node.Config.MaxDomains).
	ErrDomainLimit = newSentinel(CodeDomainLimit, "the catalog is at its limit of domains")
	// ErrInvalidSnapshot: snapshot bytes that do not decode or that violate
	// a state invariant.
	ErrInvalidSnapshot = newSentinel(CodeInvalidSnapshot, "invalid snapshot")
)

// Code is the stable, encodable identity of a lifecycle error.
type Code string

// Codes, one per sentinel. They are part of the committed wire format: never
// rename one.
const (
	CodeDomainExists      Code = "domain_exists"
	CodeDomainNotFound    Code = "domain_not_found"
	CodeDomainRunning     Code = "domain_running"
	CodeAlreadyRunning    Code = "already_running"
	CodeAlreadyStopped    Code = "already_stopped"
	CodeNoLiveVoter       Code = "no_live_voter"
	CodeAuthorityConflict Code = "authority_conflict"
	CodeUnknownNode       Code = "unknown_node"
	CodeInvalidPeriod     Code = "invalid_period"
	CodeInvalidCommand    Code = "invalid_command"
	CodeInvalidSnapshot   Code = "invalid_snapshot"
	CodeDomainLimit       Code = "domain_limit"
)

// sentinel is a sentinel error of this package with its Code. It is package
// wire's coded sentinel written again, because record imports only clock:
// its one ErrorCode method is all wire needs.
type sentinel struct {
	code Code
	msg  string
}

func newSentinel(code Code, msg string) error { return &sentinel{code: code, msg: msg} }

// Error returns the sentinel's message.
func (s *sentinel) Error() string { return s.msg }

// ErrorCode returns the sentinel's Code, the code it crosses the wire under.
func (s *sentinel) ErrorCode() string { return string(s.code) }

// Sentinels returns the package's sentinels, one per Code, for the module's
// one code table.
func Sentinels() []error { return slices.Clone(sentinels) }

var sentinels = []error{ErrDomainExists, ErrDomainNotFound, ErrDomainRunning, ErrAlreadyRunning, ErrAlreadyStopped,
	ErrNoLiveVoter, ErrAuthorityConflict, ErrUnknownNode, ErrInvalidPeriod, ErrInvalidCommand, ErrInvalidSnapshot, ErrDomainLimit}

// SentinelOf returns the sentinel of code, or nil for a code this version
// does not know.
func SentinelOf(code Code) error {
	for _, err := range sentinels {
		if err.(*sentinel).code == code {
			return err
		}
	}
	return nil
}

// Error is a lifecycle error that survives JSON encoding: Code selects the
// sentinel that Unwrap returns, Message is the complete operator-facing text.
// Domain names the domain involved, when there is one. Step is the one-based
// position of the failing step inside a transaction commit, 0 otherwise.
type Error struct {
	Code    Code   `json:"code"`
	Domain  string `json:"domain,omitempty"`
	Step    int    `json:"step,omitempty"`
	Message string `json:"message"`
}

// Error returns the operator-facing message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel for e.Code, or nil for an unknown code.
func (e *Error) Unwrap() error { return SentinelOf(e.Code) }

// AsError returns err as an *Error when it is one (or wraps one), else nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
