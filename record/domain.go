package record

import (
	"fmt"

	"github.com/nspl-dev/nspl/clock"
)

// StartMode is the form of START that produced a start point.
type StartMode uint8

const (
	// StartResume is a plain START: resume from the readable domain time
	// when there is one, otherwise from the sampled UTC at rate 1.
	StartResume StartMode = iota
	// StartNow is START AT NOW: the origin is the sampled UTC instant.
	StartNow
	// StartAt is START AT '<timestamp>': the origin is the supplied instant.
	StartAt
)

// String returns "resume", "now" or "at".
func (m StartMode) String() string {
	switch m {
	case StartResume:
		return "resume"
	case StartNow:
		return "now"
	case StartAt:
		return "at"
	default:
		return fmt.Sprintf("StartMode(%d)", uint8(m))
	}
}

// MarshalText encodes m as its String; out-of-range values are an error.
func (m StartMode) MarshalText() ([]byte, error) {
	if m > StartAt {
		return nil, fmt.Errorf("start mode %d is out of range", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText accepts exactly the spelling MarshalText produces.
func (m *StartMode) UnmarshalText(text []byte) error {
	for _, v := range []StartMode{StartResume, StartNow, StartAt} {
		if string(text) == v.String() {
			*m = v
			return nil
		}
	}
	return fmt.Errorf("unknown start mode %q; use resume, now or at", text)
}

// StartPoint is a resolved START: everything a replica needs to establish the
// generation without reading a clock. WallStartedAt is the UTC instant the
// command handler sampled once; LogicalStart the resolved logical origin
// (signed Unix nanoseconds); Rate the positive finite TIME RATE. For a paced
// domain these three values are the generation's mapping; an unpaced domain
// records them for DESCRIBE DOMAIN only.
type StartPoint struct {
	Mode          StartMode `json:"mode"`
	LogicalStart  int64     `json:"logical_start"`
	Rate          float64   `json:"time_rate"`
	WallStartedAt int64     `json:"wall_started_at"`
}

// Mapping returns the paced mapping that p establishes.
func (p StartPoint) Mapping() clock.Mapping {
	return clock.Mapping{WallStartedAt: p.WallStartedAt, LogicalStart: p.LogicalStart, Rate: p.Rate}
}

// Identity is one incarnation of a named node: the full identity of a clock
// authority. A restarted process keeps its Node name but registers a fresh
// Incarnation, so it can never act as its predecessor.
type Identity struct {
	Node        string `json:"node"`
	Incarnation uint64 `json:"incarnation"`
}

// String renders the identity as node#incarnation.
func (id Identity) String() string { return fmt.Sprintf("%s#%d", id.Node, id.Incarnation) }

// Identity returns the node incarnation that f names (zero when unassigned).
func (f AuthorityFence) Identity() Identity {
	return Identity{Node: f.Node, Incarnation: f.Incarnation}
}

// String renders the fence as node#incarnation@revision, or
// unassigned@revision.
func (f AuthorityFence) String() string {
	if !f.Assigned() {
		return fmt.Sprintf("unassigned@%d", f.Revision)
	}
	return fmt.Sprintf("%s#%d@%d", f.Node, f.Incarnation, f.Revision)
}

// Domain is the replicated record of one domain.
//
// Invariants, which every transition of package lifecycle keeps and its
// RestoreSnapshot checks:
// a paced domain has Period > 0; an unpaced one has Period and Skew 0, no
// Mapping and an unassigned Authority whose Revision stays 0. Mapping is
// non-nil exactly when the domain is paced and running, and then equals
// LastStart.Mapping(). Generation counts STARTs (0 = never started);
// LastStart is meaningful only when Generation > 0 and survives STOP.
// Authority.Revision advances by one on every START of a paced domain, every
// STOP of a paced domain, and every successful reassignment or revocation.
// Revision is the catalog revision of the command that last changed the
// domain. The JSON form of a Domain leaves Mapping out (it is
// LastStart.Mapping() whenever the domain is paced and running); the
// snapshot format writes it explicitly.
type Domain struct {
	Name       string         `json:"name"`
	Pace       Pace           `json:"pace"`
	Period     uint64         `json:"period_ns"`
	Skew       uint64         `json:"skew_ns"`
	Placement  Placement      `json:"placement"`
	Status     Status         `json:"status"`
	Generation uint64         `json:"generation"`
	LastStart  StartPoint     `json:"last_start"`
	Mapping    *clock.Mapping `json:"-"`
	Authority  AuthorityFence `json:"authority"`
	Revision   uint64         `json:"revision"`
}

// Running reports whether d is running.
func (d Domain) Running() bool { return d.Status == Running }
