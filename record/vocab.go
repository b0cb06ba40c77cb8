package record

import "fmt"

// Pace says whether a domain maintains a paced clock.
type Pace uint8

const (
	// Unpaced domains read actual UTC and produce no ticks.
	Unpaced Pace = iota
	// Paced domains project UTC through a committed mapping and produce ticks.
	Paced
)

// String returns the NSPL keyword for p.
func (p Pace) String() string {
	switch p {
	case Unpaced:
		return "UNPACED"
	case Paced:
		return "PACED"
	default:
		return fmt.Sprintf("Pace(%d)", uint8(p))
	}
}

// Placement is a domain's fallback placement policy. The zero value is
// Neutral, which is also what an omitted PLACEMENT clause means.
type Placement uint8

const (
	// Neutral leaves ordinary scheduler heuristics active.
	Neutral Placement = iota
	// RequireColocation forces connected runtime nodes onto one node.
	RequireColocation
	// PreferColocation is a soft preference for colocation.
	PreferColocation
	// SuggestSeparation is a soft preference for separation.
	SuggestSeparation
)

// String returns the NSPL spelling of p, for example "REQUIRE COLOCATION".
func (p Placement) String() string {
	switch p {
	case Neutral:
		return "NEUTRAL"
	case RequireColocation:
		return "REQUIRE COLOCATION"
	case PreferColocation:
		return "PREFER COLOCATION"
	case SuggestSeparation:
		return "SUGGEST SEPARATION"
	default:
		return fmt.Sprintf("Placement(%d)", uint8(p))
	}
}

// Status is a domain's replicated lifecycle status.
type Status uint8

const (
	// Stopped domains have no active mapping or authority.
	Stopped Status = iota
	// Running domains have an established lifecycle generation.
	Running
)

// String returns "stopped" or "running".
func (s Status) String() string {
	switch s {
	case Stopped:
		return "stopped"
	case Running:
		return "running"
	default:
		return fmt.Sprintf("Status(%d)", uint8(s))
	}
}

// AuthorityFence identifies the one node incarnation allowed to produce a
// paced domain's ticks, and the revision of that assignment. Revision
// advances on every assignment, move or revocation; an unassigned fence has
// an empty Node and a zero Incarnation.
type AuthorityFence struct {
	Node        string `json:"node"`
	Incarnation uint64 `json:"incarnation"`
	Revision    uint64 `json:"revision"`
}

// Assigned reports whether the fence names an authority.
func (f AuthorityFence) Assigned() bool { return f.Node != "" }

// MarshalText encodes p as its NSPL keyword; an out-of-range value is an
// error rather than a number that a later reader could misread.
func (p Pace) MarshalText() ([]byte, error) {
	if p > Paced {
		return nil, fmt.Errorf("pace %d is out of range", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText accepts exactly the spelling MarshalText produces.
func (p *Pace) UnmarshalText(text []byte) error {
	for _, v := range []Pace{Unpaced, Paced} {
		if string(text) == v.String() {
			*p = v
			return nil
		}
	}
	return fmt.Errorf("unknown pace %q; use PACED or UNPACED", text)
}

// MarshalText encodes p as its NSPL spelling, for example "PREFER COLOCATION".
func (p Placement) MarshalText() ([]byte, error) {
	if p > SuggestSeparation {
		return nil, fmt.Errorf("placement %d is out of range", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText accepts exactly the spelling MarshalText produces.
func (p *Placement) UnmarshalText(text []byte) error {
	for _, v := range []Placement{Neutral, RequireColocation, PreferColocation, SuggestSeparation} {
		if string(text) == v.String() {
			*p = v
			return nil
		}
	}
	return fmt.Errorf("unknown placement %q; use NEUTRAL, REQUIRE COLOCATION, PREFER COLOCATION or SUGGEST SEPARATION", text)
}

// MarshalText encodes s as "stopped" or "running".
func (s Status) MarshalText() ([]byte, error) {
	if s > Running {
		return nil, fmt.Errorf("status %d is out of range", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText accepts exactly the spelling MarshalText produces.
func (s *Status) UnmarshalText(text []byte) error {
	for _, v := range []Status{Stopped, Running} {
		if string(text) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unknown status %q; use stopped or running", text)
}
