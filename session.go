package nspl

import (
	"context"
	"iter"
	"sync"

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
	eng *Engine
	s   *session.Session

	ctx    context.Context
	cancel context.CancelFunc
	pumped chan struct{} // closed when the frame pump has ended

	// order serialises recording an attach or detach reply with applying
	// frames, so a frame is applied only after the reply of its attachment.
	order sync.Mutex

	mu      sync.Mutex
	clocks  map[string]*followed
	pending map[string]*pendingEvents
	queue   []string      // domains with unread events, oldest first
	ready   chan struct{} // created by a waiter, closed by the next event
	closed  bool
}

// followed is one attached clock: its attachment number and the clock.
type followed struct {
	attachment uint64
	clock      Clock
}

func newSession(e *Engine, s *session.Session) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &Session{
		eng: e, s: s, ctx: ctx, cancel: cancel, pumped: make(chan struct{}),
		clocks: make(map[string]*followed), pending: make(map[string]*pendingEvents),
	}
	go sess.pump()
	return sess
}

// Statements returns the underlying statement session, for callers that
// read frames themselves (a protocol server). Frames it hands out are not
// folded into Clock and the events.
func (s *Session) Statements() *session.Session { return s.s }

// Exec runs every statement of text in order and returns their results. It
// stops at the first failure, returning the results before it and a
// *grammar.Error with the statement's position whose Kind is the typed
// cause (errors.Is with session, lifecycle and catalog sentinels).
func (s *Session) Exec(ctx context.Context, text string) ([]Result, error) {
	plans, planErr := planner.PlanScript(text)
	results := make([]Result, 0, len(plans))
	for _, p := range plans {
		r, err := s.exec(ctx, p)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, planErr
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
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p.(type) {
	case planner.Attach:
		if err == nil {
			// A new attachment replaces an ended one and its unread events.
			s.dropPendingLocked(r.Domain)
			s.clocks[r.Domain] = &followed{attachment: r.Attachment, clock: Clock{Domain: r.Domain, Observed: *r.Clock}}
		}
	case planner.Detach:
		// A successful detach, and one refused because the attachment had
		// ended, both leave the domain unfollowed.
		if !s.attachedLocked(domain) {
			delete(s.clocks, domain)
			s.dropPendingLocked(domain)
		}
	}
	return r, err
}

// attachedLocked reports whether the statement session still holds an
// attachment of domain.
func (s *Session) attachedLocked(domain string) bool {
	for _, d := range s.s.Attached() {
		if d == domain {
			return true
		}
	}
	return false
}

// Clock returns the followed clock of domain: the observation of the attach
// reply or the newest state, and the newest tick of its generation. It
// reports false when the session does not follow the domain.
func (s *Session) Clock(domain string) (Clock, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.clocks[domain]
	if f == nil {
		return Clock{}, false
	}
	return f.clock, true
}

// NextEvent returns the oldest unread clock event, waiting until one arrives,
// ctx ends or the session closes (ErrClosed). Events of one domain come in
// the order received, coalesced; events of different domains in the order
// their domains first had unread events.
func (s *Session) NextEvent(ctx context.Context) (ClockEvent, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ClockEvent{}, ErrClosed
		}
		for len(s.queue) > 0 {
			d := s.queue[0]
			p := s.pending[d]
			ev, ok := p.take()
			if p.empty() {
				p.queued = false
				s.queue = s.queue[1:]
				delete(s.pending, d)
			}
			if ok {
				s.mu.Unlock()
				return ev, nil
			}
		}
		if s.ready == nil {
			s.ready = make(chan struct{})
		}
		ready := s.ready
		s.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return ClockEvent{}, ctx.Err()
		}
	}
}

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the session closes.
func (s *Session) Events(ctx context.Context) iter.Seq[ClockEvent] {
	return func(yield func(ClockEvent) bool) {
		for {
			ev, err := s.NextEvent(ctx)
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Close ends the session: its attachments stop without further events and
// its goroutines are waited for. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.ready != nil {
		close(s.ready)
		s.ready = nil
	}
	s.mu.Unlock()
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
		s.mu.Lock()
		s.applyLocked(f)
		s.mu.Unlock()
		s.order.Unlock()
	}
}

func (s *Session) applyLocked(f wire.Frame) {
	fc := s.clocks[f.Domain]
	if fc == nil || fc.attachment != f.Attachment {
		return // a frame of an attachment already released
	}
	c := &fc.clock
	p := s.pending[f.Domain]
	if p == nil {
		p = &pendingEvents{}
		s.pending[f.Domain] = p
	}
	switch f.Kind {
	case wire.FrameState:
		if f.Clock.Generation != c.Observed.Generation || f.Clock.State != c.Observed.State {
			c.Tick, c.Reading = Tick{}, 0
		}
		c.Observed = f.Clock
		// The unread tick came before this state: drop it with the older
		// state.
		p.tick = nil
		p.state = &ClockEvent{Domain: f.Domain, Kind: EventState, Clock: *c}
	case wire.FrameTick:
		if f.Tick.Generation != c.Observed.Generation || f.Tick.ID <= c.Tick.ID {
			return
		}
		c.Tick, c.Reading = f.Tick, f.Reading
		p.tick = &ClockEvent{Domain: f.Domain, Kind: EventTick, Clock: *c}
	case wire.FrameEnd:
		delete(s.clocks, f.Domain)
		p.state, p.tick = nil, nil
		p.end = &ClockEvent{Domain: f.Domain, Kind: EventEnd, Clock: *c, Reason: f.Reason}
	default:
		return
	}
	if !p.queued {
		p.queued = true
		s.queue = append(s.queue, f.Domain)
	}
	if s.ready != nil {
		close(s.ready)
		s.ready = nil
	}
}

func (s *Session) dropPendingLocked(domain string) {
	p := s.pending[domain]
	if p == nil {
		return
	}
	p.state, p.tick, p.end = nil, nil, nil
}
