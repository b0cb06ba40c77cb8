package clockrt

import (
	"fmt"
	"math"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/lifecycle"
)

// State is the meaning of a domain's local installation.
type State uint8

const (
	// StateMissing: the domain is not installed on this node. A removed
	// domain's allocation stays missing for good.
	StateMissing State = iota
	// StateStopped: the domain exists but is stopped; it has no mapping and
	// no authority, and nothing can read its clock.
	StateStopped
	// StateUninstalled: the domain is running, but this node has no paced
	// mapping and authority installed for its generation (for example, while
	// the authority is unassigned). Its clock is not readable.
	StateUninstalled
	// StateUnpaced: the domain is running unpaced; its clock reads actual UTC.
	StateUnpaced
	// StatePaced: the domain is running paced with an installed mapping and
	// authority; its clock projects UTC through the mapping.
	StatePaced
)

// String returns the state's lower-case name.
func (s State) String() string {
	switch s {
	case StateMissing:
		return "missing"
	case StateStopped:
		return "stopped"
	case StateUninstalled:
		return "uninstalled"
	case StateUnpaced:
		return "unpaced"
	case StatePaced:
		return "paced"
	default:
		return fmt.Sprintf("State(%d)", uint8(s))
	}
}

// Readable reports whether a handle can read a clock in state s.
func (s State) Readable() bool { return s == StateUnpaced || s == StatePaced }

// Lifecycle is what control-plane synchronisation installs for one domain:
// the committed lifecycle as this node holds it. Registry.Install derives the
// published Installation from it.
//
// Mapping, Period, Skew and Authority belong to StatePaced only; Install
// clears them for every other state so that equal lifecycles compare equal.
type Lifecycle struct {
	// State is the installation state; StateMissing is installed with
	// Registry.Remove, not Install.
	State State
	// Generation is the lifecycle generation. Running states (uninstalled,
	// unpaced, paced) require a nonzero generation; a stopped domain keeps
	// the generation it last ran, zero if it never started.
	Generation uint64
	// StartPoint is the logical instant (signed Unix nanoseconds) requested
	// by the latest START.
	StartPoint int64
	// Mapping is the committed paced mapping.
	Mapping clock.Mapping
	// Period is the tick period in nanoseconds; nonzero when paced.
	Period uint64
	// Skew is the admission skew in nanoseconds.
	Skew uint64
	// Authority is the committed authority fence; assigned when paced.
	Authority lifecycle.AuthorityFence
	// Revision is the catalog revision this lifecycle was committed in.
	// It orders installations but does not by itself make one differ: a
	// newer revision with an otherwise equal lifecycle publishes nothing.
	Revision uint64
}

// validate reports why lc cannot be installed, or "".
func (lc Lifecycle) validate() string {
	switch lc.State {
	case StateStopped:
	case StateUninstalled, StateUnpaced:
		if lc.Generation == 0 {
			return fmt.Sprintf("%s state requires a nonzero generation", lc.State)
		}
	case StatePaced:
		switch {
		case lc.Generation == 0:
			return "paced state requires a nonzero generation"
		case lc.Mapping.Validate() != nil:
			return lc.Mapping.Validate().Error()
		case lc.Period == 0:
			return "paced state requires a nonzero period"
		case !lc.Authority.Assigned():
			return "paced state requires an assigned authority; install an unassigned authority as uninstalled"
		}
	case StateMissing:
		return "missing state is installed by removing the domain"
	default:
		return fmt.Sprintf("unknown state %d", uint8(lc.State))
	}
	return ""
}

// normalized clears the fields that lc's state does not carry.
func (lc Lifecycle) normalized() Lifecycle {
	if lc.State != StatePaced {
		lc.Mapping = clock.Mapping{}
		lc.Period = 0
		lc.Skew = 0
		lc.Authority = lifecycle.AuthorityFence{}
	}
	if lc.State == StateMissing {
		lc.Generation = 0
		lc.StartPoint = 0
	}
	return lc
}

// sameAs reports whether lc and other install the same clock, ignoring the
// catalog revision they came from.
func (lc Lifecycle) sameAs(other Lifecycle) bool {
	lc.Revision, other.Revision = 0, 0
	return lc == other
}

// Installation is one immutable publication of a domain's local lifecycle.
// Every field is fixed when it is published; a change publishes a
// replacement and closes the Replaced channel of the installation it
// replaces. Holding an *Installation is therefore always a consistent view.
type Installation struct {
	domain   string
	lc       Lifecycle
	clock    *generationClock // nil unless lc.State.Readable()
	replaced chan struct{}
}

func newInstallation(domain string, lc Lifecycle, c *generationClock) *Installation {
	return &Installation{domain: domain, lc: lc, clock: c, replaced: make(chan struct{})}
}

// Domain returns the domain's name.
func (in *Installation) Domain() string { return in.domain }

// State returns the installation state.
func (in *Installation) State() State { return in.lc.State }

// Generation returns the lifecycle generation (zero when missing, or stopped
// before the first START).
func (in *Installation) Generation() uint64 { return in.lc.Generation }

// StartPoint returns the logical instant of the latest START.
func (in *Installation) StartPoint() int64 { return in.lc.StartPoint }

// Mapping returns the paced mapping and true when the state is paced.
func (in *Installation) Mapping() (clock.Mapping, bool) {
	return in.lc.Mapping, in.lc.State == StatePaced
}

// Period returns the paced tick period in nanoseconds, zero unless paced.
func (in *Installation) Period() uint64 { return in.lc.Period }

// Skew returns the paced admission skew in nanoseconds, zero unless paced.
func (in *Installation) Skew() uint64 { return in.lc.Skew }

// Authority returns the installed authority fence, unassigned unless paced.
func (in *Installation) Authority() lifecycle.AuthorityFence { return in.lc.Authority }

// Revision returns the catalog revision whose lifecycle published this
// installation.
func (in *Installation) Revision() uint64 { return in.lc.Revision }

// Lifecycle returns a copy of the installed lifecycle.
func (in *Installation) Lifecycle() Lifecycle { return in.lc }

// Replaced returns a channel that is closed when this installation is
// replaced by the next publication. An observer that loads an installation
// and then waits on its Replaced channel cannot miss a publication. A
// missing installation of a removed domain is never replaced.
func (in *Installation) Replaced() <-chan struct{} { return in.replaced }

// Watermark returns the floor under this installation's generation's reads
// on this node: the floor of the generation's newest frame, raised whenever
// a backward step of UTC (or a change of projection within the generation)
// lowered the frame to the bound of every value a read could have returned
// before it. It returns false when the state is not readable or nothing has
// raised the watermark above its initial math.MinInt64 since the generation
// was installed.
func (in *Installation) Watermark() (int64, bool) {
	if in.clock == nil {
		return 0, false
	}
	w := in.clock.watermark()
	return w, w != math.MinInt64
}
