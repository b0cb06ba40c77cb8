package session

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// EventKind says what an Event of a session's stream carries.
type EventKind uint8

// Event kinds.
const (
	// EventFrame is a frame of an attachment: state, tick, error,
	// interrupted or end.
	EventFrame EventKind = iota + 1
	// EventReply is a submitted request's reply: its Result or its Err.
	EventReply
	// EventRows is one chunk of a submitted LIST DOMAINS's rows (Set),
	// ahead of its reply.
	EventRows
	// EventPost is a value a consumer posted (Post), in its place behind
	// the replies and frames queued before it.
	EventPost
)

// String returns "frame", "reply", "rows" or "post".
func (k EventKind) String() string {
	switch k {
	case EventFrame:
		return "frame"
	case EventReply:
		return "reply"
	case EventRows:
		return "rows"
	case EventPost:
		return "post"
	}
	return "unknown"
}

// Event is one item of a session's ordered stream (Next).
type Event struct {
	Kind EventKind
	// ID and Tag are the submitted request's or the post's, as given.
	ID  uint64
	Tag any
	// Result is a reply's result, Err its failure: a *follow.StatementError at
	// the statement's position whose Kind is the typed cause, or
	// ErrClosed, as Exec returns them.
	Result wire.Result
	Err    error
	// State is the session's state right after the request or the post:
	// the active domain and the open transaction.
	State wire.SessionState
	// Released names the domain whose attachment the request released (a
	// detach, refused or not), so a follower of the stream stops
	// following it: its frames before the reply were the last.
	Released string
	// Set is a rows chunk's columns and rows.
	Set *wire.ResultSet
	// Frame is an EventFrame's frame.
	Frame wire.Frame
}

// Request is one statement submitted to a session's stream.
type Request struct {
	// ID and Tag come back on the request's events; the session reads
	// neither.
	ID  uint64
	Tag any
	// Plan is the statement.
	Plan planner.Plan
	// Rows streams a LIST DOMAINS's rows as EventRows events, in chunks
	// of at most ListChunkRows, before its reply, whose set then has the
	// columns and no rows. The chunks wait for room on the stream as
	// frames do, so a slow reader holds the statement back instead of the
	// rows piling up.
	Rows bool
	// Sink, when set, takes a LIST DOMAINS's rows instead, on the
	// submitting goroutine inside the request (ExecRows), for a caller
	// that reads them apart from the stream.
	Sink RowSink
}

// call is one request as it runs: where its reply goes and what it did to
// the attachments.
type call struct {
	req    Request
	stream bool         // the reply goes to the stream (Submit), not only to the caller (Exec)
	reply  *streamEntry // the stream's entry for the reply once an attach placed it early: &entry
	entry  streamEntry  // the reply's entry on the stream, made with the call
	// released is the domain whose attachment the request released.
	released string
}

// Submit runs req on the session's request lane, on the caller's
// goroutine, and places its reply on the session's stream, where Next
// takes it in order with the frames: an attach's reply before the first
// frame of its attachment, a detach's reply after the last, and every
// reply, rows chunk and frame of a request behind those of the requests
// before it. Submit returns once the reply is placed; it waits for room on
// the stream as a frame does (the stream bounds replies too), and a
// request whose ctx ends before it runs is answered with ctx's error. The
// only error Submit returns is ErrClosed, for a closed session (nothing is
// placed then) — or a request without a plan.
func (s *Session) Submit(ctx context.Context, req Request) error {
	if req.Plan == nil {
		return errors.New("session: nil plan")
	}
	_, err := s.serve(ctx, &call{req: req, stream: true})
	return err
}

// Post places an EventPost carrying id and tag on the stream, behind every
// reply and frame queued before it, taking its turn on the request lane
// like a request. A consumer orders what it answers on its own (the names
// a server reads from its node, the error that closes its session) with
// the session's replies through it.
func (s *Session) Post(ctx context.Context, id uint64, tag any) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.releaseTurn()
	return s.lane.pushEvent(s.ctx, &streamEntry{ev: Event{Kind: EventPost, ID: id, Tag: tag, State: s.State()}, ready: true})
}

// acquire takes the request lane's turn, or returns ErrClosed or ctx's
// error.
func (s *Session) acquire(ctx context.Context) error {
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	select {
	case <-s.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ctx.Done():
		return ErrClosed
	}
}

func (s *Session) releaseTurn() { s.turn <- struct{}{} }

// EndAttachments ends every attachment of the session with an end frame of
// reason, placed on the stream in domain order behind what is queued, and
// releases them: their unread frames are withdrawn and nothing of them
// follows. An attachment that ended on its own keeps its end frame and
// gets no second one. A server draining for shutdown ends its sessions' attachments
// with wire.NodeShutdown this way. It takes its turn on the request lane.
func (s *Session) EndAttachments(ctx context.Context, reason wire.EndReason) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.releaseTurn()
	s.mu.Lock()
	atts := slices.Clone(s.attachments)
	s.mu.Unlock()
	slices.SortFunc(atts, func(a, b *attachment) int { return strings.Compare(a.domain, b.domain) })
	for _, a := range atts {
		if a.ending.Load() {
			continue // its own end frame is queued or taken: nothing follows it
		}
		s.release(a)
		end := wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameEnd, Reason: reason}
		if err := s.lane.pushFrame(ctx, a, end); err != nil {
			return err
		}
	}
	return nil
}

// Next returns the next event of the session's stream, waiting until one is
// placed, ctx ends or the session closes (ErrClosed): the replies and rows
// of submitted requests, the frames of the attachments and the posts, in
// the order the delivery rules give. It is the one reader of the whole
// stream; a session read with Next is not also read with NextFrame, which
// passes over replies. The places of Exec's attach replies are passed
// over: those replies went to Exec.
func (s *Session) Next(ctx context.Context) (Event, error) {
	return s.lane.nextEvent(ctx)
}

// State returns the session's state now: the active domain and the open
// transaction.
func (s *Session) State() wire.SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked()
}

func (s *Session) stateLocked() wire.SessionState {
	st := wire.SessionState{Active: s.active}
	if s.tx != nil {
		st.InTx, st.TxDomain, st.TxPending = true, s.tx.domain, len(s.tx.steps)
	}
	return st
}

// serve runs c on the request lane and answers it: on the stream for a
// submitted request, and to the caller in every case. Its reply is placed
// before the turn passes on, so the next request's events follow it.
func (s *Session) serve(ctx context.Context, c *call) (Event, error) {
	p := c.req.Plan
	ev := Event{Kind: EventReply, ID: c.req.ID, Tag: c.req.Tag}
	if err := s.acquire(ctx); err != nil {
		if errors.Is(err, ErrClosed) {
			return ev, ErrClosed
		}
		// Never run: answered with ctx's error, in no turn.
		ev.Err, ev.State = positioned(p, err), s.State()
		return ev, s.answer(c, ev)
	}
	// A request also ends with the session.
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	emit := c.req.Sink
	if emit == nil && c.req.Rows && c.stream {
		emit = func(chunk *wire.ResultSet) error {
			return s.lane.pushEvent(rctx, &streamEntry{ev: Event{Kind: EventRows, ID: c.req.ID, Tag: c.req.Tag, Set: chunk}, ready: true})
		}
	}
	r, handedOff, err := wire.Result{}, false, s.touch()
	if err == nil {
		r, handedOff, err = s.run(rctx, c, emit)
		s.ranUntil() // a long request is not idle time
	}
	stop()
	cancel()
	if err != nil {
		if s.ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = ErrClosed
		}
		ev.Err = positioned(p, err)
	} else {
		r.Statement = p.String()
		ev.Result = r
	}
	ev.State, ev.Released = s.State(), c.released
	aerr := s.answer(c, ev)
	if !handedOff {
		s.releaseTurn()
	}
	return ev, aerr
}

// answer places a submitted request's reply on the stream: in the entry an
// attach placed for it, or at the end, waiting for room until the session
// closes. A request the caller answers itself (Exec) places nothing here.
func (s *Session) answer(c *call, ev Event) error {
	if !c.stream {
		return nil
	}
	if c.reply != nil {
		s.lane.fill(c.reply, ev)
		return nil
	}
	c.entry = streamEntry{ev: ev, ready: true}
	if err := s.lane.pushEvent(s.ctx, &c.entry); err != nil {
		return ErrClosed
	}
	return nil
}

// placeReply places the running request's reply on the stream ahead of
// every frame of a, before a's delivery starts: an entry a submitted
// request's reply fills as the request ends, which the reader waits at, or
// for Exec the place its caller's reply keeps (putReply).
func (s *Session) placeReply(c *call, a *attachment) error {
	if !c.stream {
		s.lane.putReply(a)
		return nil
	}
	c.entry = streamEntry{ev: Event{Kind: EventReply, ID: c.req.ID, Tag: c.req.Tag}}
	c.reply = &c.entry
	if err := s.lane.pushEvent(s.ctx, c.reply); err != nil {
		c.reply = nil
		return ErrClosed
	}
	return nil
}
