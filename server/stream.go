package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// requestQueue bounds the requests read ahead of the one running.
const requestQueue = 16

// stream is one session protocol stream: one session, one request loop
// that submits to it (execute), one writer loop that forwards its ordered
// stream (write).
type stream struct {
	srv  *Server
	sess *session.Session
	w    http.ResponseWriter
	rc   *http.ResponseController

	// writeMu serialises the writes of single messages: the writer loop's,
	// the welcome and the closing error of an expired session, which is
	// written out of band. It orders nothing: the session's stream does.
	writeMu  sync.Mutex
	writeErr error

	curMu     sync.Mutex
	curID     uint64
	curCancel context.CancelFunc

	// identity is the session's caller (Server.Identity), whose share of
	// the upload slots its uploads take.
	identity string

	// token is the session's resume token (wire.ServerMessage.Resume);
	// cancel ends its stream; ended is closed once the session ended and
	// its open transaction, if it was lost, is held for its client.
	token  string
	cancel context.CancelFunc
	ended  chan struct{}
	// cleanEnd: the client ended its side of the stream (it closed the
	// session), so its open transaction is reverted, not held.
	cleanEnd atomic.Bool
	// takenOver: the client reconnected under this session's token
	// before the server noticed the loss; the session ends and its
	// transaction goes to the new one.
	takenOver atomic.Bool

	// transfer is the running request's archive. It is set and cleared by
	// run and read by the session's Archives calls (WriteArchive,
	// ReadArchive), which the session makes inside Exec on run's
	// goroutine.
	transfer *transfer
}

// enter counts one admitted session in the server's wait group and its
// total, unless the server closes or drains, when it writes the refusal
// and returns false. It holds mu, as Close marks the server closed, so
// that Close's Wait sees every session it must wait for. The session calls
// s.wg.Done when it ends.
func (s *Server) enter(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	draining := false
	select {
	case <-s.draining:
		draining = true
	default:
	}
	if s.closed || draining {
		http.Error(w, "this server is shutting down; try another node or later", http.StatusServiceUnavailable)
		return false
	}
	s.wg.Add(1)
	s.sessionsTotal.Add(1)
	return true
}

func (s *Server) serveSession(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "the session protocol is a POST stream", http.StatusMethodNotAllowed)
		return
	}
	if r.ProtoMajor < 2 {
		http.Error(w, "the session protocol needs HTTP/2", http.StatusHTTPVersionNotSupported)
		return
	}
	level, err := session.ParseReadConsistency(r.Header.Get(wire.ReadConsistencyHeader))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	release, ok := s.admitSession(w, r)
	if !ok {
		return
	}
	defer release()
	if !s.enter(w) {
		return
	}
	defer s.wg.Done()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopOnClose := context.AfterFunc(s.ctx, cancel)
	defer stopOnClose()

	st := &stream{srv: s, w: w, rc: http.NewResponseController(w), identity: s.Identity(r),
		token: newResumeToken(), cancel: cancel, ended: make(chan struct{})}
	opts := s.cfg.Session
	opts.Archives = st
	opts.ReadConsistency = level
	opts.Identity = st.identity
	sess := session.New(s.cfg.Node, opts)
	st.sess = sess
	welcome := wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: s.cfg.Node.Name(),
		IdleTimeout: int64(s.cfg.Limits.SessionIdleTimeout), Rows: true, WriteIDs: true, Resume: st.token}
	if tok := r.Header.Get(wire.ResumeHeader); tok != "" {
		if tx, ok := s.resumes.claim(ctx, tok, st.identity); ok && sess.ResumeTransaction(tx) == nil {
			s.logger.Debug("session took up the open transaction of its client's lost session", "domain", tx.Domain(), "steps", tx.Steps())
			welcome.State = st.state()
		}
	}
	s.resumes.register(st)
	drained := false
	defer func() {
		var tx session.HeldTransaction
		var held bool
		if st.takenOver.Load() || (!st.cleanEnd.Load() && !drained && s.ctx.Err() == nil) {
			tx, held = sess.HoldTransaction()
		}
		s.resumes.end(st, tx, held)
		close(st.ended)
	}()
	s.mu.Lock()
	s.live[sess] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.live, sess)
		s.mu.Unlock()
		_ = sess.Close()
	}()

	// Armed before the welcome, so a client that reads the welcome knows
	// the session's idle bound runs.
	wd := newWatchdog(s.cfg.TimeSource, s.cfg.Limits)
	defer wd.stop()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	st.writeMu.Lock()
	st.writeLocked(welcome)
	st.writeMu.Unlock()

	reqs := make(chan request, requestQueue)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		st.read(ctx, wire.NewLineReader(watchedBody{r: r.Body, w: wd}, wire.ClientMessageLimit), wd, reqs)
	}()
	written := make(chan struct{})
	go func() {
		defer close(written)
		st.write(ctx)
		// A stream that takes nothing more ends the session, so a request
		// waiting for room on it ends too.
		cancel()
		_ = sess.Close()
	}()
	go func() {
		defer wg.Done()
		if err := wd.run(ctx); err != nil {
			// The request running is ended first: an ATTACH may wait for
			// an installation.
			cancel()
			st.expire(err)
		}
	}()
	if drained = st.execute(ctx, reqs); drained {
		_ = sess.EndAttachments(ctx, wire.NodeShutdown)
	}
	// Everything placed so far is written before the session ends.
	_ = sess.Post(ctx, 0, endOfStream{})
	<-written
	cancel()
	_ = sess.Close()
	_ = r.Body.Close() // ends a read the reader waits in
	wg.Wait()
	for q := range reqs { // queued and never run; the reader closed reqs
		q.upload.release()
	}
}

// request is one queued client request with the archive uploaded for it,
// or the protocol failure that ends the session once the requests before it
// are answered.
type request struct {
	m      wire.ClientMessage
	upload *upload
	fail   error
}

// read decodes client messages until the body ends, queueing requests and
// handling cancels and pings at once. Archive pieces are gathered into the
// upload of the exec with their id, which the exec carries. A message that
// does not decode, is too large or carries an id not above the last one is
// queued as the session's failure, and nothing after it is read. It closes
// reqs when it returns.
func (st *stream) read(ctx context.Context, lr *wire.LineReader, wd *watchdog, reqs chan<- request) {
	defer close(reqs)
	var up *upload // the upload being received
	defer func() { up.release() }()
	queue := func(q request) bool {
		select {
		case reqs <- q:
			return true
		case <-ctx.Done():
			q.upload.release()
			return false
		}
	}
	var lastID uint64
	for {
		line, err := lr.Next()
		if err != nil {
			if errors.Is(err, ErrMessageTooLarge) {
				queue(request{fail: err})
			} else if errors.Is(err, io.EOF) {
				st.cleanEnd.Store(true)
			} else if ctx.Err() == nil {
				st.srv.logger.Debug("session stream ended", "err", err)
			}
			return
		}
		wd.messageEnded(lr.Pending())
		m, err := wire.DecodeClientMessage(line)
		if err != nil {
			queue(request{fail: err})
			return
		}
		switch m.Type {
		case wire.TypePing:
			continue
		case wire.TypeClose:
			st.cleanEnd.Store(true)
			return
		case wire.TypeCancel:
			st.curMu.Lock()
			if st.curID == m.ID && st.curCancel != nil {
				st.curCancel()
			}
			st.curMu.Unlock()
			continue
		}
		if m.ID <= lastID {
			queue(request{fail: fmt.Errorf("%w: request id %d does not exceed the previous id %d", ErrRequestOrder, m.ID, lastID)})
			return
		}
		if m.Type == wire.TypeArchive { // a piece of the next exec's upload
			if up == nil || up.id != m.ID {
				up.release()
				up = st.srv.beginUpload(m.ID, st.identity)
			}
			up.add(m.Data)
			continue
		}
		lastID = m.ID
		q := request{m: m}
		if up != nil {
			if up.id == m.ID && m.Type == wire.TypeExec {
				up.claim()
				q.upload = up
			} else {
				up.release() // pieces no exec claimed
			}
			up = nil
		}
		if !queue(q) {
			return
		}
	}
}

// execute runs the queued requests in order until the reader stops or a
// failure ends the session, and reports whether it stopped because the
// server drains. A drain lets the running statement finish and runs no
// queued one after it.
func (st *stream) execute(ctx context.Context, reqs <-chan request) (drained bool) {
	for {
		select {
		case <-st.srv.draining:
			return true
		default:
		}
		select {
		case q, ok := <-reqs:
			if !ok {
				return false
			}
			if q.fail != nil {
				q.upload.release()
				_ = st.sess.Post(ctx, 0, closing{q.fail})
				return false
			}
			ok = st.run(ctx, q.m, q.upload)
			q.upload.release()
			if !ok {
				return false
			}
		case <-st.srv.draining:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// What the request loop posts on the session's stream, for the writer to
// write in its place: the answer to a request the session does not run
// (names, a statement that does not parse), the failure that closes the
// session, and the end of what is to be written.
type (
	names       []string
	refusal     struct{ err error }
	closing     struct{ err error }
	endOfStream struct{}
)

// sessionCloseGrace bounds how long a session the server closes waits for
// its client to take the closing error.
const sessionCloseGrace = 5 * time.Second

// expire ends the session for a bound the watchdog found broken. A client
// that does not read may hold the writer in flow control, so the stream's
// writes get a deadline first (net/http's timer, on the process clock).
func (st *stream) expire(err error) {
	_ = st.rc.SetWriteDeadline(time.Unix(0, timesource.System().Now()).Add(sessionCloseGrace))
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	st.failLocked(err, st.state())
}

// errSessionFailed stops every write after a session's closing error.
var errSessionFailed = errors.New("the session was closed with an error")

// failLocked writes err as the session's closing error (id 0) and writes
// nothing after it.
func (st *stream) failLocked(err error, state *wire.SessionState) {
	if st.writeErr == nil {
		st.srv.closes.count(err)
		st.srv.logger.Info("closing a session", "err", err)
	}
	st.writeLocked(wire.ServerMessage{Type: wire.TypeError, Error: follow.EncodeError(err), State: state})
	if st.writeErr == nil {
		st.writeErr = errSessionFailed
	}
}

// run submits one request with the archive uploaded for it, if any, or
// posts the answer to one the session does not run; it returns false once
// the session has ended.
func (st *stream) run(ctx context.Context, m wire.ClientMessage, up *upload) bool {
	if m.Type == wire.TypeDomains {
		ds := st.srv.cfg.Node.Domains()
		ns := make(names, len(ds))
		for i, d := range ds {
			ns[i] = d.Name
		}
		return st.sess.Post(ctx, m.ID, ns) == nil
	}
	stmt, err := grammar.ParseStatement(m.Text)
	var plan planner.Plan
	if err == nil {
		plan, err = planner.PlanStatement(stmt)
	}
	var x *transfer
	if err == nil {
		x, err = prepareTransfer(plan, m, up)
	}
	if err == nil && m.Write != "" {
		if err = wire.CheckWriteID(m.Write); err == nil && !makesOneWrite(plan) {
			err = fmt.Errorf("%w: a write id names the one write of a CREATE, ALTER or DROP DOMAIN, START or STOP; send this statement without one", wire.ErrProtocol)
		}
	}
	// The archive is read (x.data holds its bytes) or refused: its spool
	// and upload slot are given back before the reply is placed, so a
	// client that has its reply finds the slot free for its next upload.
	up.release()
	if err != nil {
		return st.sess.Post(ctx, m.ID, refusal{err}) == nil
	}

	reqCtx, cancel := context.WithCancel(ctx)
	if m.Write != "" {
		reqCtx = lifecycle.WithRequestID(reqCtx, writeRequestID(st.identity, m.Write))
	}
	st.curMu.Lock()
	st.curID, st.curCancel = m.ID, cancel
	st.curMu.Unlock()
	defer func() {
		st.curMu.Lock()
		st.curID, st.curCancel = 0, nil
		st.curMu.Unlock()
		cancel()
	}()

	st.transfer = x
	err = st.sess.Submit(reqCtx, session.Request{ID: m.ID, Plan: plan, Rows: m.Rows, Tag: x})
	st.transfer = nil
	return err == nil
}

// makesOneWrite reports whether plan is a statement whose exec makes at
// most one catalog write, so the write id a client gives it
// (wire.ClientMessage.Write) names exactly one command.
func makesOneWrite(plan planner.Plan) bool {
	switch plan.(type) {
	case planner.CreateDomain, planner.DropDomain, planner.AlterPlacement, planner.Start, planner.Stop:
		return true
	}
	return false
}

// writeRequestID is the catalog request id of the write a client named
// write: bound to the caller's identity, so no caller can name (and learn
// the outcome of, or suppress) another's write, and apart from the ids
// nodes give their own writes, which never hold a '/'.
func writeRequestID(identity, write string) string {
	sum := sha256.Sum256([]byte(identity))
	return "w/" + hex.EncodeToString(sum[:8]) + "/" + write
}

// takeOver ends the session for the client that reconnected under its
// token: its open transaction is held for the new session.
func (st *stream) takeOver() {
	st.takenOver.Store(true)
	st.cancel()
}

// write forwards the session's stream to the client, one message per
// event, until the request loop's end of the stream, the end of ctx or a
// write that fails. A BACKUP's archive goes out in pieces ahead of its
// reply.
func (st *stream) write(ctx context.Context) {
	for {
		ev, err := st.sess.Next(ctx)
		if err != nil {
			return
		}
		// The message points at a copy of the state, so the event itself
		// stays on the stack.
		state := func() *wire.SessionState { s := ev.State; return &s }
		var m wire.ServerMessage
		switch ev.Kind {
		case session.EventFrame:
			m = wire.ServerMessage{Type: wire.TypeFrame, Frame: ev.Frame.AppendJSON(nil)}
		case session.EventRows:
			m = wire.ServerMessage{Type: wire.TypeRows, ID: ev.ID, Set: wire.EncodeSet(ev.Set)}
		case session.EventReply:
			if ev.Err != nil {
				st.srv.statements.failed.Add(1)
				m = wire.ServerMessage{Type: wire.TypeError, ID: ev.ID, Error: follow.EncodeError(ev.Err), State: state()}
				break
			}
			st.srv.statements.ok.Add(1)
			m = wire.ServerMessage{Type: wire.TypeReply, ID: ev.ID, Result: wire.EncodeResult(ev.Result), State: state()}
			if x, _ := ev.Tag.(*transfer); x != nil && !x.read {
				st.writeMu.Lock()
				ok := st.writeArchiveLocked(ev.ID, x.data)
				st.writeMu.Unlock()
				if !ok {
					return
				}
				m.Archive = &wire.Archive{Name: x.name, Bytes: int64(len(x.data))}
			}
		case session.EventPost:
			switch v := ev.Tag.(type) {
			case names:
				m = wire.ServerMessage{Type: wire.TypeNames, ID: ev.ID, Names: v}
			case refusal:
				st.srv.statements.failed.Add(1)
				m = wire.ServerMessage{Type: wire.TypeError, ID: ev.ID, Error: follow.EncodeError(v.err), State: state()}
			case closing:
				st.writeMu.Lock()
				st.failLocked(v.err, state())
				st.writeMu.Unlock()
				continue
			case endOfStream:
				return
			default:
				continue
			}
		}
		st.writeMu.Lock()
		ok := st.writeLocked(m)
		st.writeMu.Unlock()
		if !ok {
			return
		}
	}
}

func (st *stream) state() *wire.SessionState {
	ws := &wire.SessionState{Active: st.sess.ActiveDomain()}
	if d, n, ok := st.sess.InTransaction(); ok {
		ws.InTx, ws.TxDomain, ws.TxPending = true, d, n
	}
	return ws
}

// writeLocked writes one message and flushes it. After a failed write it
// writes nothing more and returns false.
func (st *stream) writeLocked(m wire.ServerMessage) bool {
	if st.writeErr != nil {
		return false
	}
	b, err := json.Marshal(m)
	if err != nil {
		st.writeErr = err
		return false
	}
	b = append(b, '\n')
	if _, err := st.w.Write(b); err != nil {
		st.writeErr = err
		return false
	}
	if err := st.rc.Flush(); err != nil {
		st.writeErr = err
		return false
	}
	return true
}
