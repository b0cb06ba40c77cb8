package nspl

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Virtual time.
//
// An engine opened with a *timesource.Virtual as its TimeSource runs on
// virtual time: its clock stands still while statements run, and moves only
// when a session waits for a clock event (Session.NextEvent, Session.Events)
// and finds none pending once the engine has settled. It then jumps to the
// earliest armed timer (a producer's next tick, a statement's deadline, a
// wait the caller armed on the source) and fires that one timer; the tick
// or change it brings reaches the session before time moves again. Reads,
// ticks, authority readings, deadlines and waits all follow it, and no wall
// time passes, so the same statements and waits give the same events, the
// same instants and the same bytes on every run.
//
// The engine has settled when nothing is on its way anywhere: the node has
// reconciled every installation and every producer waits on its timer
// (node.Node.Settled), every firing's goroutine has come back to its timer
// (timesource.Virtual.Settled), and every session's fan-outs, delivery
// tasks, lane and pump are idle (session.Session.Settled). They are read in
// that order, the order in which work flows, so work handed on between two
// reads is seen at the later one.
//
// Consensus (raft) runs on real time whatever the engine's clock: a write
// that waits for it waits in real time.
//
// Virtual time is driven by whichever session waits; events pending on
// another session do not hold it back, so a program that follows clocks
// through several sessions under virtual time reads them all from one
// goroutine, in turn.

// VirtualIncarnation is the node incarnation of an in-memory engine on
// virtual time, fixed so that what names it (an authority in DESCRIBE
// DOMAIN, SHOW CLUSTER STATUS) repeats from run to run; an engine on real
// time, or with a DataDir, takes a fresh random one on every open.
const VirtualIncarnation uint64 = 1

// ErrNoTimer is returned by a wait for a clock event under virtual time when
// no event is pending, the engine has settled and no timer is armed:
// nothing the engine or the caller waits for can happen, so the wait would
// last forever. Follow a running paced domain, or arm a timer on the source
// (timesource.WithTimeout) to bound the wait.
var ErrNoTimer = errors.New("virtual time cannot advance: no timer is armed, so no clock event will come; follow a running paced domain or bound the wait")

// ErrNotSettled is returned by a wait under virtual time when the engine
// has not settled within SettleTimeout of real time. It is a bug of the
// engine: report it with the statements that led to it.
var ErrNotSettled = errors.New("virtual time: the engine did not settle")

// SettleTimeout bounds, in real time, how long a wait under virtual time
// waits for the engine to settle before it fails with ErrNotSettled. The
// engine settles within microseconds of its last event; the bound is wide
// so that a machine under heavy load never reaches it.
const SettleTimeout = 30 * time.Second

// settled reports whether the engine has settled (see Virtual time). The
// node is read before the time source and the source before the sessions.
func (e *Engine) settled() bool {
	if !e.node.Settled() || !e.virtual.Settled() {
		return false
	}
	e.mu.Lock()
	sessions := make([]*Session, 0, len(e.sessions))
	for s := range e.sessions {
		sessions = append(sessions, s)
	}
	e.mu.Unlock()
	for _, s := range sessions {
		if !s.s.Settled(s.handled.Load()) {
			return false
		}
	}
	return true
}

// settle waits until the engine has settled, or ctx ends, or the session
// closes, or SettleTimeout of real time passes.
func (e *Engine) settle(ctx context.Context, s *Session) error {
	var deadline time.Duration
	wall := timesource.System()
	for spin := 0; ; spin++ {
		if e.settled() {
			return nil
		}
		if s.closed.Load() {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case spin < 64:
			runtime.Gosched()
			continue
		case spin == 64:
			deadline = wall.Monotonic() + SettleTimeout
		case wall.Monotonic() > deadline:
			return ErrNotSettled
		}
		pause := min(time.Duration(spin-63)*10*time.Microsecond, time.Millisecond)
		if !timesource.Sleep(ctx, wall, pause, s.ctx.Done()) {
			if s.closed.Load() {
				return ErrClosed
			}
			return ctx.Err()
		}
	}
}

// nextVirtual is NextEvent under virtual time: the oldest pending event,
// or, when none is pending, the oldest after Advance, as often as it takes.
func (s *Session) nextVirtual(ctx context.Context) (ClockEvent, error) {
	for {
		if s.follow.Pending() > 0 || ctx.Err() != nil || s.closed.Load() {
			return s.follow.NextEvent(ctx) // the pending event first
		}
		if err := s.Advance(ctx); err != nil {
			if errors.Is(err, ErrNoTimer) || errors.Is(err, ErrNotSettled) {
				return ClockEvent{}, err
			}
			return s.follow.NextEvent(ctx) // ends as ctx or the session did
		}
	}
}

// Advance moves virtual time on: it waits until the engine has settled
// (Settle), then jumps to the earliest armed timer's deadline and fires
// every timer due then. What they bring about reaches the session's
// pending events by the next Settle. While the session has events pending
// once settled, it only settles: time moves on once they are taken
// (NextEvent), so that no tick is coalesced with the next. It fails with
// ErrNoTimer when no timer is armed, with ErrRealTime on an engine on real
// time, and with ctx's error or ErrClosed when the wait ends first.
//
// NextEvent calls it whenever no event is pending; a caller that waits for
// something else (a timer it armed on the source, a condition on the
// followed clocks) calls it in a loop, taking its own timer's firing and
// stopping the timer before the next call: a fired timer that is not yet
// stopped holds the engine unsettled. Events of different domains that
// fall due at one instant come in either order.
func (s *Session) Advance(ctx context.Context) error {
	e := s.eng
	if e.virtual == nil {
		return ErrRealTime
	}
	e.stepMu.Lock()
	defer e.stepMu.Unlock()
	if err := e.settle(ctx, s); err != nil {
		return err
	}
	if s.follow.Pending() > 0 {
		// A pending tick would be coalesced with the next one.
		return nil
	}
	if !e.virtual.Step() {
		return ErrNoTimer
	}
	return nil
}

// ErrRealTime is Advance's error on an engine on real time, whose clock
// moves by itself.
var ErrRealTime = errors.New("the engine runs on real time; only an engine opened with a *timesource.Virtual advances time")

// Settle waits, under virtual time, until the engine has settled: every
// event the statements run so far brought about at the current virtual
// instant has reached the session and is pending (NextEvent returns it
// without moving time). It returns at once on an engine on real time,
// where events arrive as time passes. A script runner calls it after each
// statement to print the events that statement caused in order.
func (s *Session) Settle(ctx context.Context) error {
	if s.eng.virtual == nil {
		return nil
	}
	return s.eng.settle(ctx, s)
}

// PendingEvents returns the number of clock events NextEvent would return
// without waiting.
func (s *Session) PendingEvents() int { return s.follow.Pending() }

// Virtual reports whether the engine runs on virtual time.
func (e *Engine) Virtual() bool { return e.virtual != nil }
