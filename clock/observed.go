package clock

import "fmt"

// ObservedState is what an observed clock is: the public meaning of a
// node's installation of one domain generation.
type ObservedState uint8

const (
	// Stopped: the domain exists and is stopped; it has no readable clock.
	Stopped ObservedState = iota
	// Uninstalled: the domain is running, but the serving node has no paced
	// mapping and authority installed for the generation (for example while
	// the authority is unassigned); the clock is not readable.
	Uninstalled
	// Unpaced: the domain is running unpaced; its clock is actual UTC.
	Unpaced
	// Paced: the domain is running paced; its clock projects UTC through the
	// committed mapping.
	Paced
)

// String returns the state's lower-case name.
func (s ObservedState) String() string {
	switch s {
	case Stopped:
		return "stopped"
	case Uninstalled:
		return "uninstalled"
	case Unpaced:
		return "unpaced"
	case Paced:
		return "paced"
	default:
		return fmt.Sprintf("ObservedState(%d)", uint8(s))
	}
}

// Observed is the observed clock of one domain as a serving node has it
// installed: the vocabulary an attachment reports and a client projects
// with. It carries the lifecycle generation and, only when paced, the
// period, skew and mapping (logical origin, UTC anchor, time rate). It
// carries no authority identity or revision, so an authority move that keeps
// the installation observes as an equal value.
//
// Observed is a comparable value: two observations are the same clock
// exactly when they are ==. Fields that State does not carry are zero.
type Observed struct {
	// Generation is the START generation (0 for a domain never started).
	Generation uint64
	// State says which of the fields below are meaningful.
	State ObservedState
	// Period is the paced tick period in nanoseconds.
	Period uint64
	// Skew is the paced admission skew in nanoseconds.
	Skew uint64
	// LogicalStart is the paced logical origin, signed Unix nanoseconds.
	LogicalStart int64
	// WallStartedAt is the paced UTC anchor, signed Unix nanoseconds.
	WallStartedAt int64
	// Rate is the paced TIME RATE.
	Rate float64
}

// Mapping returns the paced mapping and true when o is paced.
func (o Observed) Mapping() (Mapping, bool) {
	return Mapping{WallStartedAt: o.WallStartedAt, LogicalStart: o.LogicalStart, Rate: o.Rate}, o.State == Paced
}

// Readable reports whether o has a readable time: paced or unpaced.
func (o Observed) Readable() bool { return o.State == Paced || o.State == Unpaced }

// LogicalAt returns the domain's logical time at the UTC instant utc: the
// mapping's projection (rounded down, never before the origin) when paced,
// utc itself when unpaced. A stopped or uninstalled clock is an error
// wrapping ErrNotReadable; a projection that leaves signed Unix nanoseconds
// an *OverflowError.
//
// This is the client-side projection of one observation. It keeps no
// watermark, so unlike a node's bound clock it follows utc backwards.
func (o Observed) LogicalAt(utc int64) (int64, error) {
	switch o.State {
	case Paced:
		m, _ := o.Mapping()
		return m.Project(utc)
	case Unpaced:
		return utc, nil
	default:
		return 0, o.notReadable("logical time")
	}
}

// WaitUntil returns the physical nanoseconds that must elapse after the UTC
// instant utc before the domain's logical time reaches target: for a paced
// clock, ceil((target − LogicalAt(utc)) / Rate) of the exact quotient, so a
// wait never ends early; for an unpaced clock, target − utc. The result is 0
// when target is already reached. A stopped or uninstalled clock is an error
// wrapping ErrNotReadable; a wait that does not fit unsigned 64-bit
// nanoseconds is an *OverflowError.
func (o Observed) WaitUntil(utc, target int64) (uint64, error) {
	switch o.State {
	case Paced:
		m, _ := o.Mapping()
		current, err := m.Project(utc)
		if err != nil {
			return 0, err
		}
		return m.Wait(current, target)
	case Unpaced:
		if target <= utc {
			return 0, nil
		}
		// The difference of two int64 values fits uint64 when positive.
		return uint64(target) - uint64(utc), nil
	default:
		return 0, o.notReadable("wait")
	}
}

// WindowAt returns the admission window at the UTC instant utc, as a node's
// paced ingestion reconstructs it: NewWindow(LogicalStart, Period, Skew,
// LogicalAt(utc)). Only a paced clock has a window; any other state is an
// error wrapping ErrNotReadable.
func (o Observed) WindowAt(utc int64) (Window, error) {
	if o.State != Paced {
		return Window{}, o.notReadable("admission window")
	}
	now, err := o.LogicalAt(utc)
	if err != nil {
		return Window{}, err
	}
	return NewWindow(o.LogicalStart, o.Period, o.Skew, now)
}

func (o Observed) notReadable(what string) error {
	if o.State == Unpaced {
		return fmt.Errorf("%w: %s needs a paced clock, and generation %d is unpaced; only paced domains have admission windows",
			ErrNotReadable, what, o.Generation)
	}
	return fmt.Errorf("%w: %s of generation %d: the clock is %s; wait for a paced or unpaced state before reading it",
		ErrNotReadable, what, o.Generation, o.State)
}
