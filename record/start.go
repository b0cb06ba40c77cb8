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
