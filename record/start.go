package record

// StartRequest is a START as the operator wrote it, before resolution.
// At is the origin of StartAt (signed Unix nanoseconds) and is ignored
// otherwise. Rate is TIME RATE; 0 means the clause was omitted (rate 1) and
// is the only value a plain START (StartResume) accepts.
type StartRequest struct {
	Mode StartMode
	At   int64
	Rate float64
}

// StepOp is the kind of one transaction step.
type StepOp string

// The lifecycle steps a transaction can carry.
const (
	StepStart          StepOp = "start"
	StepStop           StepOp = "stop"
	StepAlterPlacement StepOp = "alter_placement"
)

// StepRequest is one queued lifecycle step of a transaction before
// resolution: Start for StepStart, Placement for StepAlterPlacement.
type StepRequest struct {
	Op        StepOp
	Start     StartRequest
	Placement Placement
}
