package lifecycle

import "github.com/nspl-dev/nspl/record"

// The plain values of the replicated vocabulary live in package record, so
// that a remote client can name a domain's record, a START as written and a
// refusal without linking the transitions; these aliases keep every caller
// of lifecycle compiling against the same types.
type (
	Pace           = record.Pace
	Placement      = record.Placement
	Status         = record.Status
	AuthorityFence = record.AuthorityFence
	Identity       = record.Identity
	StartMode      = record.StartMode
	StartPoint     = record.StartPoint
	StartRequest   = record.StartRequest
	StepOp         = record.StepOp
	StepRequest    = record.StepRequest
	Domain         = record.Domain
	Error          = record.Error
	Code           = record.Code
)

// Values of the aliased enumerations.
const (
	Unpaced = record.Unpaced
	Paced   = record.Paced

	Neutral           = record.Neutral
	RequireColocation = record.RequireColocation
	PreferColocation  = record.PreferColocation
	SuggestSeparation = record.SuggestSeparation

	Stopped = record.Stopped
	Running = record.Running

	StartResume = record.StartResume
	StartNow    = record.StartNow
	StartAt     = record.StartAt

	StepStart          = record.StepStart
	StepStop           = record.StepStop
	StepAlterPlacement = record.StepAlterPlacement
)

// Codes of the lifecycle errors, as record defines them.
const (
	CodeDomainExists      = record.CodeDomainExists
	CodeDomainNotFound    = record.CodeDomainNotFound
	CodeDomainRunning     = record.CodeDomainRunning
	CodeAlreadyRunning    = record.CodeAlreadyRunning
	CodeAlreadyStopped    = record.CodeAlreadyStopped
	CodeNoLiveVoter       = record.CodeNoLiveVoter
	CodeAuthorityConflict = record.CodeAuthorityConflict
	CodeUnknownNode       = record.CodeUnknownNode
	CodeInvalidPeriod     = record.CodeInvalidPeriod
	CodeInvalidCommand    = record.CodeInvalidCommand
	CodeInvalidSnapshot   = record.CodeInvalidSnapshot
	CodeDomainLimit       = record.CodeDomainLimit
)

// Sentinel errors of the lifecycle transitions: the very values record
// declares, so errors.Is matches through either name. Every error the
// package returns is an *Error whose Unwrap yields exactly one of these.
var (
	ErrDomainExists      = record.ErrDomainExists
	ErrDomainNotFound    = record.ErrDomainNotFound
	ErrDomainRunning     = record.ErrDomainRunning
	ErrAlreadyRunning    = record.ErrAlreadyRunning
	ErrAlreadyStopped    = record.ErrAlreadyStopped
	ErrNoLiveVoter       = record.ErrNoLiveVoter
	ErrAuthorityConflict = record.ErrAuthorityConflict
	ErrUnknownNode       = record.ErrUnknownNode
	ErrInvalidPeriod     = record.ErrInvalidPeriod
	ErrInvalidCommand    = record.ErrInvalidCommand
	ErrDomainLimit       = record.ErrDomainLimit
	ErrInvalidSnapshot   = record.ErrInvalidSnapshot
)

// AsError returns err as an *Error when it is one (or wraps one), else nil.
func AsError(err error) *Error { return record.AsError(err) }
