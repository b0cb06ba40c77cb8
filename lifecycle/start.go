package lifecycle

import "fmt"

// ResolveStart turns a START of domain d into the resolved values a Start
// command carries. The command handler calls it before proposing, with the
// UTC instant it sampled once (sampledUTC) and, when the domain has one, its
// readable current time (readable, nil otherwise). The rules:
//
//   - AT NOW: the origin is sampledUTC;
//   - AT ts: the origin is ts, kept exactly;
//   - plain START: the origin is *readable with the rate of the last start
//     point (1 if there was none) when readable is given, otherwise
//     sampledUTC at rate 1.
//
// The physical anchor is always sampledUTC. A paced domain also gets its
// initial authority from SelectAuthority(d.Name, available, voters), and no
// eligible candidate is ErrNoLiveVoter; an unpaced domain gets none. Pass
// available incarnations that match the registry (State.Incarnations
// filtered by liveness): Apply refuses an authority that is not the
// registered incarnation of its node. Status
// is not checked here (Apply refuses a START of a running domain), so a
// transaction can resolve a STOP; START pair against the running domain.
func ResolveStart(d Domain, req StartRequest, sampledUTC int64, readable *int64, available []NodeIncarnation, voters []string) (ResolvedStart, error) {
	r, err := resolveStart(d, req, sampledUTC, readable, available, voters)
	if err != nil {
		return ResolvedStart{}, err
	}
	return r, nil
}

func resolveStart(d Domain, req StartRequest, sampledUTC int64, readable *int64, available []NodeIncarnation, voters []string) (ResolvedStart, *Error) {
	if d.Name == "" {
		return ResolvedStart{}, errInvalid("", "domain name is empty")
	}
	rate := req.Rate
	if rate == 0 {
		rate = 1
	} else if req.Mode == StartResume {
		return ResolvedStart{}, errInvalid(d.Name,
			"domain '%s': a plain START takes no TIME RATE; use START AT NOW TIME RATE %v", d.Name, req.Rate)
	}
	point := StartPoint{Mode: req.Mode, Rate: rate, WallStartedAt: sampledUTC}
	switch req.Mode {
	case StartNow:
		point.LogicalStart = sampledUTC
	case StartAt:
		point.LogicalStart = req.At
	case StartResume:
		point.LogicalStart = sampledUTC
		if readable != nil {
			point.LogicalStart = *readable
			if d.Generation > 0 && validRate(d.LastStart.Rate) {
				point.Rate = d.LastStart.Rate
			}
		}
	}
	if err := validatePoint(point, d.Name); err != nil {
		return ResolvedStart{}, err
	}
	out := ResolvedStart{Point: point}
	if d.Pace == Paced {
		id, ok := SelectAuthority(d.Name, available, voters)
		if !ok {
			return ResolvedStart{}, errNoLiveVoter(d.Name)
		}
		out.Authority = &id
	}
	return out, nil
}

// ResolveTransaction freezes a transaction's steps when its commit is
// admitted, with one sampled UTC instant for all of them. Every step happens
// at that instant, so a plain START inside the transaction resumes from the
// domain time at the preceding step boundary: the readable time given for
// the domain before the transaction, or the origin (and rate) of an earlier
// START in the same transaction. Status rules are left to Apply, which
// refuses the whole transaction if any step fails. A resolution error
// carries the one-based step it came from.
func ResolveTransaction(d Domain, steps []StepRequest, sampledUTC int64, readable *int64, available []NodeIncarnation, voters []string) (Transaction, error) {
	tx := Transaction{Domain: d.Name, Steps: make([]Step, 0, len(steps))}
	var at *int64
	if readable != nil {
		v := *readable
		at = &v
	}
	for i, sr := range steps {
		switch sr.Op {
		case StepStart:
			r, err := resolveStart(d, sr.Start, sampledUTC, at, available, voters)
			if err != nil {
				return Transaction{}, inStep(err, i, sr.Op)
			}
			tx.Steps = append(tx.Steps, Step{Op: StepStart, Start: &r})
			// The new generation's time at the shared instant is its origin.
			origin := r.Point.LogicalStart
			at = &origin
			d.Generation = max(d.Generation, 1) // only "has started" matters here
			d.LastStart = r.Point
		case StepStop:
			tx.Steps = append(tx.Steps, Step{Op: StepStop})
		case StepAlterPlacement:
			p := sr.Placement
			if p > SuggestSeparation {
				return Transaction{}, inStep(errInvalid(d.Name, "domain '%s': placement %d out of range", d.Name, uint8(p)), i, sr.Op)
			}
			tx.Steps = append(tx.Steps, Step{Op: StepAlterPlacement, Placement: &p})
		default:
			return Transaction{}, inStep(errInvalid(d.Name, "unknown step op %q", sr.Op), i, sr.Op)
		}
	}
	return tx, nil
}

// Readable returns the domain time a plain START resumes from when the
// handler has no better reading: for a running paced domain, its mapping
// projected at sampledUTC; for a running unpaced domain, sampledUTC itself
// (its clock is actual UTC); for a stopped domain, nil (no readable time).
// A node that holds a watermarked read of the generation should pass that
// instead, since it never lies behind this projection. A projection that
// leaves signed Unix nanoseconds is an error wrapping clock.ErrOverflow.
func Readable(d Domain, sampledUTC int64) (*int64, error) {
	if !d.Running() {
		return nil, nil
	}
	if d.Pace == Unpaced {
		t := sampledUTC
		return &t, nil
	}
	if d.Mapping == nil {
		return nil, nil
	}
	t, err := d.Mapping.Project(sampledUTC)
	if err != nil {
		return nil, fmt.Errorf("domain '%s': its readable time cannot be resumed from: %w", d.Name, err)
	}
	return &t, nil
}
