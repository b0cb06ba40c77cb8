package record

import "errors"

// Sentinel errors of the lifecycle transitions. Every error package
// lifecycle returns is an *Error whose Unwrap yields exactly one of these,
// so callers test with errors.Is even after the error has crossed an
// encoding boundary (only the Code travels; the sentinel is recovered from
// it).
var (
	// ErrDomainExists: CREATE of a name that is already in the catalog.
	ErrDomainExists = errors.New("domain already exists")
	// ErrDomainNotFound: the named domain is not in the catalog.
	ErrDomainNotFound = errors.New("domain does not exist")
	// ErrDomainRunning: DROP of a running domain.
	ErrDomainRunning = errors.New("domain is running")
	// ErrAlreadyRunning: START of a running domain.
	ErrAlreadyRunning = errors.New("domain is already running")
	// ErrAlreadyStopped: STOP of a stopped domain.
	ErrAlreadyStopped = errors.New("domain is already stopped")
	// ErrNoLiveVoter: a paced START found no eligible authority.
	ErrNoLiveVoter = errors.New("no live voter is available to own the clock")
	// ErrAuthorityConflict: a compare-and-set reassignment whose expected
	// generation, status, pace or fence no longer matches the domain.
	ErrAuthorityConflict = errors.New("authority compare-and-set conflict")
	// ErrUnknownNode: a node name or incarnation that is not registered.
	ErrUnknownNode = errors.New("node is not registered")
	// ErrInvalidPeriod: a paced domain with PERIOD 0, or an unpaced domain
	// given a PERIOD or SKEW.
	ErrInvalidPeriod = errors.New("invalid period")
	// ErrInvalidCommand: a command whose values are malformed (empty name,
	// out-of-range enum, rate that is not positive and finite, unknown op,
	// wrong payload). It indicates a bug in the proposer.
	ErrInvalidCommand = errors.New("invalid command")
	// ErrInvalidSnapshot: snapshot bytes that do not decode or that violate
	// a state invariant.
	ErrInvalidSnapshot = errors.New("invalid snapshot")
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
)

var sentinels = map[Code]error{
	CodeDomainExists:      ErrDomainExists,
	CodeDomainNotFound:    ErrDomainNotFound,
	CodeDomainRunning:     ErrDomainRunning,
	CodeAlreadyRunning:    ErrAlreadyRunning,
	CodeAlreadyStopped:    ErrAlreadyStopped,
	CodeNoLiveVoter:       ErrNoLiveVoter,
	CodeAuthorityConflict: ErrAuthorityConflict,
	CodeUnknownNode:       ErrUnknownNode,
	CodeInvalidPeriod:     ErrInvalidPeriod,
	CodeInvalidCommand:    ErrInvalidCommand,
	CodeInvalidSnapshot:   ErrInvalidSnapshot,
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
func (e *Error) Unwrap() error { return sentinels[e.Code] }

// AsError returns err as an *Error when it is one (or wraps one), else nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
