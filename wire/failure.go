package wire

// ClockFailure is the typed report of a domain clock that failed at its
// authority: the clock arithmetic of one generation left its representable
// range, so the authority's tick producer stopped and no further tick of
// that generation will come. It travels in an error frame (FrameError), in
// the interconnect's progress report and in DESCRIBE DOMAIN and SHOW CLUSTER
// STATUS, and holds until the domain's next generation.
//
// Its fields are plain values so that a frame carrying it stays comparable
// and a receiver that has not linked the failing package still reads it.
type ClockFailure struct {
	// Domain and Generation name the clock that failed.
	Domain     string
	Generation uint64
	// Op is the clock operation that failed, as package clock names it:
	// "project" (the projection), "latest due tick" (the tick boundary),
	// "next tick" (the cadence) or "wait" (the rate conversion of a
	// logical wait into physical nanoseconds).
	Op string
	// Code is the wire code of the failure's sentinel (for example
	// "clock_overflow"); a receiver matches that sentinel with errors.Is.
	Code string
	// Cause is the arithmetic cause beneath the operation.
	Cause string
	// Message is the full typed report, exactly as the authority's warning
	// logged it.
	Message string
}

// Error returns the full typed report.
func (f *ClockFailure) Error() string { return f.Message }

// ErrorCode returns Code, so a failure relayed on keeps its code.
func (f *ClockFailure) ErrorCode() string { return f.Code }

// Is reports whether Code names target (see Coded), or target is
// ErrRemote, so errors.Is matches a failure reported by another node
// exactly like a local one.
func (f *ClockFailure) Is(target error) bool { return codeNames(f.Code, target) }
