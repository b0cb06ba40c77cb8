package nspl

import (
	"context"
	"errors"
	"iter"
	"sync"
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
type Session struct {
	eng    *Engine
	s      *session.Session
	follow *follow.Follow

	ctx    context.Context
	cancel context.CancelFunc
	pumped chan struct{} // closed when the frame pump has ended

	// order serialises recording an attach or detach reply with applying
	// frames, so a frame is applied only after the reply of its attachment.
	order sync.Mutex

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
		if _, ok := p.(planner.ListDomains); ok {
			return s.s.ExecRows(ctx, p, sink)
		}
		return s.exec(ctx, p)
	})
	return rs, follow.ScriptFailure(err)
}

func (s *Session) exec(ctx context.Context, p planner.Plan) (Result, error) {
	switch p.(type) {
	case planner.Attach, planner.Detach:
	default:
		return s.s.Exec(ctx, p)
	}
	s.order.Lock()
	defer s.order.Unlock()
	domain := s.s.ActiveDomain()
	r, err := s.s.Exec(ctx, p)
	switch p.(type) {
	case planner.Attach:
		if err == nil {
			// A new attachment replaces an ended one and its unread events.
			s.follow.Attached(r.Domain, r.Attachment, *r.Clock)
		}
	case planner.Detach:
		// A successful detach, and one refused because the attachment had
		// ended, both leave the domain unfollowed.
		if !s.attached(domain) {
			s.follow.Released(domain)
		}
	}
	return r, err
}

// attached reports whether the statement session still holds an
// attachment of domain.
func (s *Session) attached(domain string) bool {
	for _, d := range s.s.Attached() {
		if d == domain {
			return true
		}
	}
	return false
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
func (s *Session) NextEvent(ctx context.Context) (ClockEvent, error) { return s.follow.NextEvent(ctx) }

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the session closes.
func (s *Session) Events(ctx context.Context) iter.Seq[ClockEvent] { return s.follow.Events(ctx) }

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

// pump reads the statement session's frames and folds them into the
// followed clocks and the pending events.
func (s *Session) pump() {
	defer close(s.pumped)
	for {
		f, err := s.s.NextFrame(s.ctx)
		if err != nil {
			return
		}
		s.order.Lock()
		s.follow.Apply(f)
		s.order.Unlock()
	}
}
