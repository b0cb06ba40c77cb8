package lifecycle

import (
	"fmt"
	"math"
)

// validatePoint checks a start point of the named domain: a known mode and
// a positive finite TIME RATE. It is a function, not a method, because
// StartPoint is record's type.
func validatePoint(p StartPoint, domain string) *Error {
	if p.Mode > StartAt {
		return errInvalid(domain, "domain '%s': start mode %d is out of range", domain, uint8(p.Mode))
	}
	if !validRate(p.Rate) {
		return errInvalid(domain, "domain '%s': TIME RATE %v must be a positive finite number", domain, p.Rate)
	}
	return nil
}

func validRate(r float64) bool { return r > 0 && !math.IsInf(r, 1) }

// cloneDomain returns a copy of d that shares no memory with it.
func cloneDomain(d Domain) Domain {
	if d.Mapping != nil {
		m := *d.Mapping
		d.Mapping = &m
	}
	return d
}

// validateDomain checks the invariants documented on Domain.
func validateDomain(d Domain) error {
	if d.Name == "" {
		return fmt.Errorf("domain with an empty name")
	}
	if d.Pace > Paced || d.Placement > SuggestSeparation || d.Status > Running {
		return fmt.Errorf("domain '%s': enum out of range", d.Name)
	}
	if d.Pace == Paced && d.Period == 0 {
		return fmt.Errorf("domain '%s': paced with PERIOD 0", d.Name)
	}
	if d.Pace == Unpaced && (d.Period != 0 || d.Skew != 0) {
		return fmt.Errorf("domain '%s': unpaced with a PERIOD or SKEW", d.Name)
	}
	if d.Pace == Unpaced && (d.Authority != AuthorityFence{}) {
		return fmt.Errorf("domain '%s': unpaced with an authority fence", d.Name)
	}
	if d.Status == Running && d.Generation == 0 {
		return fmt.Errorf("domain '%s': running without a generation", d.Name)
	}
	if d.Generation > 0 {
		if err := validatePoint(d.LastStart, d.Name); err != nil {
			return err
		}
	} else if d.LastStart != (StartPoint{}) {
		return fmt.Errorf("domain '%s': start point without a generation", d.Name)
	}
	pacedRunning := d.Pace == Paced && d.Status == Running
	if pacedRunning != (d.Mapping != nil) {
		return fmt.Errorf("domain '%s': mapping present=%t but paced and running=%t", d.Name, d.Mapping != nil, pacedRunning)
	}
	if d.Mapping != nil && *d.Mapping != d.LastStart.Mapping() {
		return fmt.Errorf("domain '%s': mapping differs from the last start point", d.Name)
	}
	if !pacedRunning && d.Authority.Assigned() {
		return fmt.Errorf("domain '%s': authority assigned while not paced and running", d.Name)
	}
	if d.Authority.Assigned() != (d.Authority.Incarnation != 0) {
		return fmt.Errorf("domain '%s': authority fence with only one of node and incarnation", d.Name)
	}
	return nil
}
