package lifecycle

import (
	"math"
	"slices"
)

// RestoredDomain is one domain of a Restore command: its archived
// definition, generation and latest start point, resolved by the command
// handler before proposing.
//
// With Resume false the domain is created stopped, with no mapping and an
// unassigned authority, keeping Generation and LastStart so that a later
// START establishes Generation+1. With Resume true the archived status is
// kept: a running domain is created running at exactly Generation with
// LastStart as its start point and, when paced, LastStart.Mapping() as its
// committed mapping verbatim; Authority is then this cluster's authority,
// chosen by the handler from the live voters (never the archived one), and
// is required for a paced running domain and refused for any other.
//
// AuthorityRevision is the archived fence revision. The restored fence
// continues from it (the next revision when an authority is assigned), so
// an archived progress report can never carry a fence the restored domain
// holds.
type RestoredDomain struct {
	Name              string     `json:"name"`
	Pace              Pace       `json:"pace"`
	Period            uint64     `json:"period_ns"`
	Skew              uint64     `json:"skew_ns"`
	Placement         Placement  `json:"placement"`
	Generation        uint64     `json:"generation"`
	LastStart         StartPoint `json:"last_start"`
	Running           bool       `json:"running,omitempty"`
	Resume            bool       `json:"resume,omitempty"`
	Authority         *Identity  `json:"authority,omitempty"`
	AuthorityRevision uint64     `json:"authority_revision,omitempty"`
}

// Restore creates every domain it lists in one catalog revision, all or
// nothing: if any name already exists, or any domain breaks a rule, no
// domain is created. Domains must be listed with distinct names.
type Restore struct {
	Domains []RestoredDomain `json:"domains"`
}

func (r Restore) validate() *Error {
	if len(r.Domains) == 0 {
		return errInvalid("", "restore lists no domain")
	}
	seen := make(map[string]struct{}, len(r.Domains))
	for _, d := range r.Domains {
		if err := checkName("domain", d.Name); err != nil {
			return err
		}
		if _, dup := seen[d.Name]; dup {
			return errInvalid(d.Name, "restore lists domain '%s' twice; restore each name once", d.Name)
		}
		seen[d.Name] = struct{}{}
		if d.Pace > Paced || d.Placement > SuggestSeparation {
			return errInvalid(d.Name, "domain '%s': pace or placement out of range", d.Name)
		}
		if d.Generation > 0 {
			if err := validatePoint(d.LastStart, d.Name); err != nil {
				return err
			}
		} else if d.LastStart != (StartPoint{}) {
			return errInvalid(d.Name, "domain '%s': start point without a generation", d.Name)
		}
		if d.Running && d.Generation == 0 {
			return errInvalid(d.Name, "domain '%s': running without a generation", d.Name)
		}
		if d.Authority != nil {
			if err := checkIdentity(d.Name, *d.Authority); err != nil {
				return err
			}
		}
	}
	return nil
}

// restore applies a Restore command: every check runs before any domain is
// stored, so a refusal leaves the state untouched.
func (s *State) restore(r Restore, rev uint64) (bool, *Error) {
	out := make([]Domain, 0, len(r.Domains))
	for _, rd := range r.Domains {
		if _, ok := s.lookup(rd.Name); ok {
			e := errDomainExists(rd.Name)
			e.Message = "domain '" + rd.Name + "' already exists; nothing was restored: restore it under a free name with AS <new_name>, or DROP the existing domain first"
			return false, e
		}
		d, err := s.restoredDomain(rd, rev)
		if err != nil {
			return false, err
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Domain) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for i := range out {
		s.putRecord(&out[i])
	}
	return true, nil
}

func (s *State) restoredDomain(rd RestoredDomain, rev uint64) (Domain, *Error) {
	switch {
	case rd.Pace == Paced && rd.Period == 0:
		return Domain{}, newError(CodeInvalidPeriod, rd.Name,
			"domain '%s': PERIOD must be positive; the archive is not a valid paced domain", rd.Name)
	case rd.Pace == Unpaced && (rd.Period != 0 || rd.Skew != 0):
		return Domain{}, newError(CodeInvalidPeriod, rd.Name,
			"domain '%s': an unpaced domain takes no PERIOD or SKEW; the archive is not a valid unpaced domain", rd.Name)
	case rd.Pace == Unpaced && rd.AuthorityRevision != 0:
		return Domain{}, errInvalid(rd.Name, "domain '%s' is unpaced and has no authority revision", rd.Name)
	}
	d := Domain{
		Name:       rd.Name,
		Pace:       rd.Pace,
		Period:     rd.Period,
		Skew:       rd.Skew,
		Placement:  rd.Placement,
		Status:     Stopped,
		Generation: rd.Generation,
		LastStart:  rd.LastStart,
		Authority:  AuthorityFence{Revision: rd.AuthorityRevision},
		Revision:   rev,
	}
	resumeRunning := rd.Resume && rd.Running
	wantAuthority := resumeRunning && rd.Pace == Paced
	switch {
	case wantAuthority && rd.Authority == nil:
		return Domain{}, errNoLiveVoter(rd.Name)
	case !wantAuthority && rd.Authority != nil:
		return Domain{}, errInvalid(rd.Name, "domain '%s' is restored without a running paced clock and takes no authority; resolve the restore without one", rd.Name)
	}
	if !resumeRunning {
		return d, nil
	}
	d.Status = Running
	if rd.Pace == Unpaced {
		return d, nil
	}
	if err := s.checkRegistered(rd.Name, *rd.Authority); err != nil {
		return Domain{}, err
	}
	if rd.AuthorityRevision == math.MaxUint64 {
		return Domain{}, errInvalid(rd.Name, "domain '%s': authority revision %d is exhausted; restore without RESUME and START it", rd.Name, rd.AuthorityRevision)
	}
	m := rd.LastStart.Mapping()
	d.Mapping = &m
	d.Authority = AuthorityFence{Node: rd.Authority.Node, Incarnation: rd.Authority.Incarnation, Revision: rd.AuthorityRevision + 1}
	return d, nil
}
