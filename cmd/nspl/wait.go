package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/literal"
)

// Waiting in a script: \sleep DURATION and \wait tick N.
//
// On real time they wait and print nothing of what arrives: a clock
// frame's instants depend on when the script ran. Under --virtual-time the
// script's output repeats byte for byte, so it prints clock events: after
// every statement, those it brought about (the engine settles first); while
// it waits, each as it arrives, in the session's order. Only a wait moves
// virtual time, and then to the next armed timer at once.

// eventWaiter is what \wait needs of a session: the followed clocks and
// their events.
type eventWaiter interface {
	NextEvent(ctx context.Context) (follow.ClockEvent, error)
	Clock(domain string) (follow.Clock, bool)
	ActiveDomain() string
}

// virtualSession is an embedded session; under virtual time the runner
// prints the clock events it settles into.
type virtualSession interface {
	eventWaiter
	Settle(ctx context.Context) error
	Advance(ctx context.Context) error
	PendingEvents() int
}

var _ virtualSession = (*nspl.Session)(nil)

// printSettled, under virtual time, waits until the engine has settled and
// prints every clock event pending, without moving time: the events of
// different domains sorted by domain name (they may fall due at one
// instant, when the order they arrive in is a race), each domain's in the
// session's order. It does nothing on real time.
func (r *runner) printSettled(ctx context.Context) error {
	if r.virtual == nil {
		return nil
	}
	if err := r.virtual.Settle(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // interrupted: the statement loop reports it
		}
		return ioError(err)
	}
	var batch []follow.ClockEvent
	for r.virtual.PendingEvents() > 0 {
		ev, err := r.virtual.NextEvent(ctx)
		if err != nil {
			break
		}
		batch = append(batch, ev)
	}
	slices.SortStableFunc(batch, func(a, b follow.ClockEvent) int { return strings.Compare(a.Domain, b.Domain) })
	for _, ev := range batch {
		if err := r.printEvent(ev); err != nil {
			return err
		}
	}
	return nil
}

// advance, under virtual time, prints what has arrived and then moves
// virtual time to its next timer (nspl.Session.Advance).
func (r *runner) advance(ctx context.Context) error {
	if err := r.printSettled(ctx); err != nil {
		return err
	}
	return r.virtual.Advance(ctx)
}

// printEvent writes one clock event as the shell prints it, among the
// replies.
func (r *runner) printEvent(ev follow.ClockEvent) error {
	if _, err := fmt.Fprintln(r.out(), shellEventLine(ev)); err != nil {
		return ioError(err)
	}
	return nil
}

// sleep is \sleep DURATION: it waits DURATION (an NSPL duration such as
// 30s, 1h or 250ms) on the runner's clock. Under virtual time it prints
// each clock event that arrives meanwhile.
func (r *runner) sleep(ctx context.Context, arg string) (metaResult, error) {
	const usage = `\sleep DURATION (such as \sleep 30s or \sleep 1h)`
	if arg == "" || strings.ContainsAny(arg, " \t") {
		return metaResult{msg: "give one duration; write " + usage}, nil
	}
	d, err := grammar.ParseDuration(arg)
	switch {
	case err == nil && d > math.MaxInt64:
		err = errors.New("too long a wait")
	case err == nil && r.virtual == nil && d > uint64(maxSleep):
		err = fmt.Errorf("more than %s of real time; under --virtual-time a wait of any length takes none", literal.FormatDuration(uint64(maxSleep)))
	}
	if err != nil {
		return metaResult{msg: fmt.Sprintf(`\sleep %s: %v; write %s`, arg, err, usage)}, nil
	}
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.virtual == nil {
		if !timesource.Sleep(ctx, r.clock, time.Duration(d), nil) {
			return metaResult{interrupted: true}, nil
		}
		return metaResult{}, nil
	}
	t := r.clock.NewTimer(time.Duration(d))
	defer t.Stop()
	for {
		if err := r.advance(ctx); err != nil {
			if ctx.Err() != nil {
				return metaResult{interrupted: true}, nil
			}
			var re *RunError
			if errors.As(err, &re) {
				return metaResult{}, err
			}
			return metaResult{msg: fmt.Sprintf(`\sleep %s: %v`, arg, err)}, nil
		}
		select {
		case <-t.C():
			t.Stop() // settles the firing, so the engine can settle
			return metaResult{}, r.printSettled(ctx)
		default:
		}
	}
}

// maxSleep bounds \sleep on real time: a day is more than any script
// means. Under virtual time a wait costs no wall time and is not bounded.
const maxSleep = 24 * time.Hour

// waitTick is \wait tick N: it waits until the attached clock of the active
// domain has delivered tick N of its current generation, or a later one.
// It fails at once when the domain is not attached, and when the clock
// stops, ends or fails first; under virtual time also when nothing can
// arrive (nspl.ErrNoTimer). Under virtual time it prints each clock event
// that arrives meanwhile.
func (r *runner) waitTick(ctx context.Context, arg string) (metaResult, error) {
	const usage = `\wait tick N (such as \wait tick 5)`
	f := strings.Fields(arg)
	if len(f) != 2 || !strings.EqualFold(f[0], "tick") {
		return metaResult{msg: "write " + usage}, nil
	}
	want, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil || want == 0 {
		return metaResult{msg: fmt.Sprintf(`\wait tick %q: give a tick id, a whole number from 1; write %s`, f[1], usage)}, nil
	}
	w, ok := r.exec.(eventWaiter)
	if !ok {
		return metaResult{msg: `\wait needs a session that follows clocks`}, nil
	}
	domain := w.ActiveDomain()
	if domain == "" {
		return metaResult{msg: `\wait tick: no active domain; USE one and ATTACH DOMAIN CLOCK; first`}, nil
	}
	name := grammar.FormatName(domain)
	r.outMu.Lock()
	defer r.outMu.Unlock()
	for {
		if r.virtual != nil {
			if err := r.printSettled(ctx); err != nil {
				return metaResult{}, err
			}
		}
		c, ok := w.Clock(domain)
		if !ok {
			return metaResult{msg: fmt.Sprintf(`\wait tick %d: %s is not attached; run ATTACH DOMAIN CLOCK; first`, want, name)}, nil
		}
		obs := c.Observed
		if c.Tick.ID >= want && c.Tick.Generation == obs.Generation {
			return metaResult{}, nil
		}
		if obs.State != clock.Paced && r.virtual == nil && r.startedSince(ctx, domain, obs.Generation) {
			// On real time the state frame of a START may still be on
			// its way: the catalog has the domain running in a newer
			// generation than the one the attachment last reported.
			if _, err := w.NextEvent(ctx); err != nil && ctx.Err() != nil {
				return metaResult{interrupted: true}, nil
			}
			continue
		}
		if obs.State != clock.Paced {
			return metaResult{msg: fmt.Sprintf(`\wait tick %d: the clock of %s is %s (generation %d) and ticks only while paced; START it first`,
				want, name, obs.State, obs.Generation)}, nil
		}
		if c.Failure != nil && c.Failure.Generation == obs.Generation {
			return metaResult{msg: fmt.Sprintf(`\wait tick %d: %s failed at tick %d: %s`, want, name, c.Tick.ID, c.Failure.Message)}, nil
		}
		var err error
		if r.virtual != nil {
			err = r.virtual.Advance(ctx)
		} else {
			_, err = w.NextEvent(ctx)
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return metaResult{interrupted: true}, nil
			case errors.Is(err, nspl.ErrNoTimer):
				return metaResult{msg: fmt.Sprintf(`\wait tick %d: nothing can arrive: %v`, want, err)}, nil
			}
			return metaResult{msg: fmt.Sprintf(`\wait tick %d: %v`, want, err)}, nil
		}
	}
}

// startedSince reports whether the catalog, as the session's node has it
// (DESCRIBE DOMAIN), holds domain running in a generation after gen.
func (r *runner) startedSince(ctx context.Context, domain string, gen uint64) bool {
	res, err := r.exec.ExecText(ctx, "DESCRIBE DOMAIN "+grammar.FormatName(domain)+";")
	if err != nil || len(res) != 1 || res[0].Set == nil || len(res[0].Set.Rows) != 1 {
		return false
	}
	var status string
	var generation uint64
	for i, c := range res[0].Set.Columns {
		switch c.Name {
		case "status":
			status = res[0].Set.Rows[0][i].String()
		case "generation":
			generation, _ = strconv.ParseUint(res[0].Set.Rows[0][i].String(), 10, 64)
		}
	}
	return status == "running" && generation > gen
}
