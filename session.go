package nspl

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// Result is the reply to one statement (see wire.Result).
type Result = wire.Result

// Session runs NSPL statements and follows attached domain clocks. Exec
// calls run one at a time; Clock, NextEvent and Events may be called from
// other goroutines at any time.
//
// Statements are submitted to the statement session's stream, and one
// pump reads that stream in order: it applies each frame to the followed
// clocks, records each attach and release a reply reports before the
// frames behind it, and hands each reply to the Exec waiting for it.
type Session struct {
	eng    *Engine
	s      *session.Session
	follow *follow.Follow

	ctx    context.Context
	cancel context.CancelFunc
	pumped chan struct{} // closed when the pump has ended
	ids    atomic.Uint64 // the last request id submitted
	// handled counts the stream entries the pump has taken and finished
	// with, for virtual time's settledness (session.Session.Settled).
	handled atomic.Uint64

	closed atomic.Bool
}

func newSession(e *Engine, s *session.Session) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &Session{eng: e, s: s, follow: follow.NewFollow(ErrClosed), ctx: ctx, cancel: cancel, pumped: make(chan struct{})}
	go sess.pump()
	return sess
}

// Exec runs stmts in order and returns their results. It stops at the
// first failure, returning the results before it and an *Error whose
// Pos.Line is the failed statement's index plus one and which matches the
// cause's sentinel (ErrAlreadyRunning, ErrNotFound, …) with errors.Is. A
// statement holding an error (see Statement) fails without running; the
// statements before it run. On a closed session (or engine) the error is
// ErrClosed itself, not an *Error.
//
// Statements are the one way to run NSPL built from Go values; ExecText
// runs NSPL text a person wrote (a script, a shell line). Exec runs the
// plan each builder holds, without printing it as text to parse it again.
func (s *Session) Exec(ctx context.Context, stmts ...Statement) ([]Result, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	results := make([]Result, 0, len(stmts))
	for i, st := range stmts {
		rs, err := s.execStatement(ctx, i, st)
		results = append(results, rs...)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// ExecText runs every statement of text in order and returns their
// results. It stops at the first failure, returning the results before it
// and an *Error with the statement's position in text that matches the
// cause's sentinel with errors.Is, or ErrClosed itself on a closed session.
// A statement that does not parse fails after the statements before it ran.
func (s *Session) ExecText(ctx context.Context, text string) ([]Result, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rs, err := planner.RunScript(ctx, text, s.exec)
	return rs, follow.ScriptFailure(err)
}

// RowSink receives one chunk of a result set streamed as it is produced:
// the columns and at most wire.RowsChunkLimit rows, in order.
type RowSink = wire.RowSink

// ExecTextRows is ExecText for a caller that takes result rows as they are
// produced: the rows of a LIST DOMAINS in text are handed to sink in chunks,
// in order, before its result, whose set then has the columns and no rows,
// so the statement never holds the whole table. Other statements run as in
// ExecText.
func (s *Session) ExecTextRows(ctx context.Context, text string, sink RowSink) ([]Result, error) {
	if sink == nil {
		return nil, errors.New("nspl: nil row sink")
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rs, err := planner.RunScript(ctx, text, func(ctx context.Context, p planner.Plan) (Result, error) {
		return s.submit(ctx, session.Request{Plan: p, Sink: sink})
	})
	return rs, follow.ScriptFailure(err)
}

func (s *Session) exec(ctx context.Context, p planner.Plan) (Result, error) {
	return s.submit(ctx, session.Request{Plan: p})
}

// submit runs req on the statement session and waits for its reply,
// which the pump hands over once it has recorded what the reply changed
// of the followed clocks.
func (s *Session) submit(ctx context.Context, req session.Request) (Result, error) {
	reply := make(chan session.Event, 1)
	req.ID, req.Tag = s.ids.Add(1), reply
	if err := s.s.Submit(ctx, req); err != nil {
		return Result{}, err
	}
	select {
	case ev := <-reply:
		return ev.Result, ev.Err
	case <-s.pumped:
		return Result{}, ErrClosed
	}
}

// ActiveDomain returns the domain USE made active, or "".
func (s *Session) ActiveDomain() string { return s.s.ActiveDomain() }

// InTransaction reports the open transaction's domain and the number of
// queued steps; ok is false when no transaction is open.
func (s *Session) InTransaction() (domain string, pending int, ok bool) { return s.s.InTransaction() }

// DomainNames returns the names of the engine's committed domains, as
// client.Client.DomainNames returns the serving node's; the shell completes
// domain names with it. A closed session returns ErrClosed.
func (s *Session) DomainNames(context.Context) ([]string, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	ds := s.eng.node.Domains()
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	return names, nil
}

// Clock returns the followed clock of domain, a name in any case ("Prod"
// and "prod" are one domain): the observation of the attach reply or the
// newest state, and the newest tick of its generation. It reports false
// when the session does not follow the domain.
func (s *Session) Clock(domain string) (Clock, bool) { return s.follow.Clock(domain) }

// NextEvent returns the oldest unread clock event, waiting until one arrives,
// ctx ends or the session closes (ErrClosed). Events of one domain come in
// the order received, coalesced; events of different domains in the order
// their domains first had unread events.
func (s *Session) NextEvent(ctx context.Context) (ClockEvent, error) {
	if s.eng.virtual != nil {
		return s.nextVirtual(ctx)
	}
	return s.follow.NextEvent(ctx)
}

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the session closes.
func (s *Session) Events(ctx context.Context) iter.Seq[ClockEvent] {
	if s.eng.virtual == nil {
		return s.follow.Events(ctx)
	}
	return func(yield func(ClockEvent) bool) {
		for {
			ev, err := s.nextVirtual(ctx)
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Close ends the session: its attachments stop without further events and
// its goroutines are waited for. It is idempotent.
func (s *Session) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.follow.Close()
	err := s.s.Close()
	s.cancel()
	<-s.pumped
	s.eng.forget(s)
	return err
}

// pump reads the statement session's stream in order: frames fold into
// the followed clocks and the pending events, an attach reply records its
// attachment (a new one replaces an ended one and its unread events) and a
// reply that released an attachment stops following its domain, each
// before the frames behind it, and every reply goes to its waiting Exec.
func (s *Session) pump() {
	defer close(s.pumped)
	for {
		ev, err := s.s.Next(s.ctx)
		if err != nil {
			return
		}
		switch ev.Kind {
		case session.EventFrame:
			s.follow.Apply(ev.Frame)
		case session.EventReply:
			if r := ev.Result; ev.Err == nil && r.Attachment != 0 && r.Clock != nil {
				s.follow.Attached(r.Domain, r.Attachment, *r.Clock)
			}
			if ev.Released != "" {
				s.follow.Released(ev.Released)
			}
			ev.Tag.(chan session.Event) <- ev
		}
		s.handled.Add(1)
	}
}
