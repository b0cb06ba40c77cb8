package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// detachTimeout bounds the DETACH nspl clock sends on its way out.
const detachTimeout = 5 * time.Second

// clockSession is what nspl clock needs from a session.
type clockSession interface {
	statementExecutor
	NextEvent(ctx context.Context) (follow.ClockEvent, error)
	ActiveDomain() string
}

// followClock is nspl clock: attach to the domain's clock and print the
// attach reply and every clock event as the stable line of the frame it
// reports until the domain ends (its attachment ends, or a running clock
// stops), --until-tick ticks have arrived, the clock fails at its authority
// (an error event: the failure, printed on stderr too, is the error),
// --timeout passes (ErrClockTimeout) or Ctrl-C (ErrInterrupted). It
// detaches before it returns unless the attachment has already ended. The
// session's follow delivers a tick only when it advances, so a tick
// delivered anew after a lost connection is neither printed nor counted
// twice.
func (m *Main) followClock(ctx context.Context, sess clockSession, src timesource.Source, opts options) error {
	if opts.clockDomain != "" {
		name, err := grammar.ParseName(opts.clockDomain)
		if err != nil {
			return usageErrorf("clock: --domain: %v", err)
		}
		if _, err := execPlan(ctx, sess, planner.Use{Name: name}); err != nil {
			return clockFailure(m.Stderr, err)
		}
	}
	domain := sess.ActiveDomain()
	if domain == "" {
		return usageErrorf("clock: no domain to follow; give --domain NAME or USE one in the -f/-c setup")
	}

	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	interrupted := make(chan struct{})
	var once sync.Once
	defer m.setInterruptHandler(func() {
		once.Do(func() { close(interrupted) })
		stop()
	})()
	timedOut := make(chan struct{})
	if opts.clockTimeout > 0 {
		t := src.NewTimer(opts.clockTimeout)
		done := make(chan struct{})
		defer func() {
			stop()
			<-done
			t.Stop()
		}()
		go func() {
			defer close(done)
			select {
			case <-t.C():
				close(timedOut)
				stop()
			case <-waitCtx.Done():
			}
		}()
	}

	res, err := execPlan(waitCtx, sess, planner.Attach{})
	if err != nil {
		return clockFailure(m.Stderr, err)
	}
	running := false
	if res.Clock != nil {
		running = res.Clock.State != clock.Stopped
		first := follow.ClockEvent{Domain: domain, Attachment: res.Attachment, Kind: follow.EventState,
			Clock: follow.Clock{Domain: domain, Observed: *res.Clock}}
		if err := writeLine(m.Stdout, clockEventLine(first, opts.format)); err != nil {
			return err
		}
		if err := cannotTick(domain, res.Clock.State, opts); err != nil {
			detach(sess)
			fmt.Fprintf(m.Stderr, "nspl clock: %s\n", err)
			return &RunError{Kind: ErrNoTick, Err: err, Reported: true}
		}
	}

	var ticks uint64
	for {
		ev, err := sess.NextEvent(waitCtx)
		if err != nil {
			detach(sess)
			select {
			case <-interrupted:
				return &RunError{Kind: ErrStatementFailed, Err: fmt.Errorf("clock %s: %w after %d tick(s)", grammar.FormatName(domain), ErrInterrupted, ticks)}
			case <-timedOut:
				return &RunError{Kind: ErrStatementFailed, Err: fmt.Errorf("clock %s: %w after %s with %d tick(s)", grammar.FormatName(domain), ErrClockTimeout, opts.clockTimeout, ticks)}
			default:
			}
			if ctx.Err() != nil {
				return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
			}
			return &RunError{Kind: ErrStatementFailed, Err: fmt.Errorf("clock %s: %w", grammar.FormatName(domain), err)}
		}
		if ev.Domain != domain {
			continue // an attachment the -f/-c setup made; not followed here
		}
		if err := writeLine(m.Stdout, clockEventLine(ev, opts.format)); err != nil {
			detach(sess)
			return err
		}
		switch ev.Kind {
		case follow.EventEnd:
			return nil
		case follow.EventError:
			detach(sess)
			return clockFailure(m.Stderr, ev.Failure)
		case follow.EventState:
			if ev.Clock.Observed.State == clock.Stopped {
				if running {
					detach(sess)
					return nil
				}
			} else {
				running = true
			}
		case follow.EventTick:
			ticks++
			if opts.untilTick > 0 && ticks >= opts.untilTick {
				detach(sess)
				return nil
			}
		}
	}
}

// detach leaves the followed clock; its failure does not change the outcome
// the caller reports.
func detach(sess clockSession) {
	ctx, cancel := context.WithTimeout(context.Background(), detachTimeout)
	defer cancel()
	_, _ = execPlan(ctx, sess, planner.Detach{})
}

// execPlan runs the one statement p, in its canonical text, and returns its
// result.
func execPlan(ctx context.Context, sess statementExecutor, p planner.Plan) (wire.Result, error) {
	results, err := sess.ExecText(ctx, p.String())
	if err != nil {
		return wire.Result{}, err
	}
	if len(results) != 1 {
		return wire.Result{}, fmt.Errorf("%s: expected one result, got %d", p, len(results))
	}
	return results[0], nil
}

// clockFailure prints a statement failure of nspl clock's own statements.
func clockFailure(w io.Writer, err error) error {
	msg := err.Error()
	if ge := follow.AsStatementError(err); ge != nil {
		msg = ge.Msg
	}
	fmt.Fprintf(w, "nspl clock: error: %s\n", termSafe(msg)) // the node's text
	return &RunError{Kind: ErrStatementFailed, Err: err, Reported: true}
}

func writeLine(w io.Writer, line string) error {
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	if _, err := io.WriteString(w, line); err != nil {
		return ioError(err)
	}
	return nil
}

// cannotTick returns why --until-tick would wait forever on a clock in
// state st, nil when a tick may still come: an unpaced clock never ticks,
// and a stopped one only after a START, which --wait-start waits for.
func cannotTick(domain string, st clock.ObservedState, opts options) error {
	if opts.untilTick == 0 {
		return nil
	}
	name := "'" + domain + "'"
	switch {
	case st == clock.Unpaced:
		return fmt.Errorf("%w: domain %s is unpaced, and an unpaced clock has no ticks; --until-tick %d would wait forever: follow a PACED domain, or drop --until-tick to print its state", ErrNoTick, name, opts.untilTick)
	case st == clock.Stopped && !opts.waitStart:
		return fmt.Errorf("%w: domain %s is stopped, so no tick will come until it is started; START it first, or pass --wait-start to wait for its START", ErrNoTick, name)
	}
	return nil
}
