package session

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// Defaults of Options.
const (
	// DefaultFrameLimit is the largest encoded frame (Frame.AppendJSON) a
	// session queues when Options.FrameLimit is zero.
	DefaultFrameLimit = 64 << 10
	// DefaultLaneCapacity is the number of state and end frames the control
	// lane holds when Options.LaneCapacity is zero. Tick slots come on top:
	// at most one per attachment.
	DefaultLaneCapacity = 64
)

// Options configures a session.
type Options struct {
	// Logger receives the session's warnings, such as a frame skipped for
	// its size. Nil means slog.Default().
	Logger *slog.Logger
	// FrameLimit is the largest encoded frame, in bytes, the session
	// queues; a larger state or tick frame is logged and skipped, a larger
	// end frame logged and the attachment ended without it, and an attach
	// whose reply would be larger is refused. Zero means DefaultFrameLimit.
	FrameLimit int
	// LaneCapacity bounds the state and end frames waiting in the control
	// lane; delivery waits for room beyond it. Zero means
	// DefaultLaneCapacity.
	LaneCapacity int
	// Directory, when set, lists the session among the node's open
	// sessions for SHOW ALL TRANSACTIONS; the session joins it when made
	// and leaves it when it closes. Nil: SHOW ALL TRANSACTIONS shows this
	// session's transaction alone.
	Directory *Directory
	// Identity names who the session serves, as SHOW ALL TRANSACTIONS
	// shows it: the verified identity of a remote caller, "local" for an
	// embedded session. Empty shows as NULL.
	Identity string
	// ClusterStatus answers SHOW CLUSTER STATUS on a cluster member. Nil
	// shows the serving node alone, as an embedded node is.
	ClusterStatus ClusterStatusSource
	// Archives is where BACKUP, RESTORE and DESCRIBE BACKUP write and read
	// their archives. Nil means LocalArchives: files on this machine, as an
	// embedded session names them. A server gives its remote sessions one
	// that streams archives to and from the client instead.
	Archives Archives
	// TimeSource is the session's clock: the age of its open transaction
	// and the idle time that expires it are read from its monotonic clock,
	// and it arms no timer. Nil means timesource.System(); an embedded
	// session and a server's sessions use their node's or server's.
	TimeSource timesource.Source
	// MaxTransactionSteps bounds the steps one transaction queues; the
	// step that would pass it is refused with ErrTransactionFull and the
	// transaction stays open. Zero (or negative) means
	// DefaultMaxTransactionSteps.
	MaxTransactionSteps int
	// MaxTransactionBytes bounds the bytes of canonical statement text one
	// transaction queues, as MaxTransactionSteps bounds its steps. Zero (or
	// negative) means DefaultMaxTransactionBytes.
	MaxTransactionBytes int
	// TransactionIdleTimeout reverts an open transaction when its session
	// runs no statement for longer than this: the next statement reports
	// ErrTransactionExpired instead of running. Zero means
	// DefaultTransactionIdleTimeout; negative means never.
	TransactionIdleTimeout time.Duration
	// ReadConsistency is what the session's reads promise (see
	// ReadConsistency); empty means ReadLocal.
	ReadConsistency ReadConsistency
}

// Session is one client's statement context: the active domain, an open
// transaction, an ordered lane of requests and the clock attachments, keyed
// by domain, with their delivery tasks and the control lane they feed.
//
// Exec and ExecText are serialised: requests run one at a time in the order
// they acquire the lane. NextFrame may run concurrently with them and with
// itself. ActiveDomain and InTransaction may be called at any time. Close
// ends the session, stops every delivery task and waits for them.
type Session struct {
	// lane comes first, in place: a reader's NextFrame then touches the
	// lane's first cache line, which holds what a tick changes, and its
	// second, which holds its entries (lane). The padding at the end puts
	// the record in a size class whose objects start on a cache line
	// (448 bytes).
	lane lane

	node       Engine
	installs   installations // n's installation counter, which an attach waits on
	logger     *slog.Logger
	frameLimit int
	cluster    ClusterStatusSource
	archives   Archives
	src        timesource.Source
	// The transaction limits, with their defaults filled in (int32: the
	// record stays in its size class; a larger limit is the largest int32).
	maxSteps    int32
	maxBytes    int32
	idleTimeout time.Duration
	readLevel   ReadConsistency
	listed      *listing // its place in Options.Directory; nil without one

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc
	turn   chan struct{}  // the request lane: holding its one token runs a request
	wg     sync.WaitGroup // delivery tasks and attach waits

	mu          sync.Mutex // guards the fields below
	closed      bool
	active      string
	tx          *transaction
	attachments []*attachment // at most one per domain
	nextID      uint64
	lastRequest time.Duration // monotonic reading as the last request started or ended
}

// New returns a session served by n. The session owns no goroutine until it
// attaches a clock; Close releases everything it started. Closing n ends
// nothing of the session by itself: close sessions before their node.
func New(n Engine, opts Options) *Session {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FrameLimit <= 0 {
		opts.FrameLimit = DefaultFrameLimit
	}
	if opts.LaneCapacity <= 0 {
		opts.LaneCapacity = DefaultLaneCapacity
	}
	if opts.Archives == nil {
		opts.Archives = LocalArchives{}
	}
	if opts.TimeSource == nil {
		opts.TimeSource = timesource.System()
	}
	if opts.MaxTransactionSteps <= 0 {
		opts.MaxTransactionSteps = DefaultMaxTransactionSteps
	}
	if opts.MaxTransactionBytes <= 0 {
		opts.MaxTransactionBytes = DefaultMaxTransactionBytes
	}
	if opts.TransactionIdleTimeout == 0 {
		opts.TransactionIdleTimeout = DefaultTransactionIdleTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		node:        n,
		installs:    n,
		logger:      opts.Logger,
		frameLimit:  opts.FrameLimit,
		cluster:     opts.ClusterStatus,
		archives:    opts.Archives,
		src:         opts.TimeSource,
		maxSteps:    int32(min(opts.MaxTransactionSteps, math.MaxInt32)),
		maxBytes:    int32(min(opts.MaxTransactionBytes, math.MaxInt32)),
		idleTimeout: opts.TransactionIdleTimeout,
		readLevel:   opts.ReadConsistency,
		lastRequest: opts.TimeSource.Monotonic(),
		ctx:         ctx,
		cancel:      cancel,
		turn:        make(chan struct{}, 1),
	}
	s.lane.init(opts.LaneCapacity)
	s.turn <- struct{}{}
	if opts.Directory != nil {
		s.listed = &listing{dir: opts.Directory, identity: opts.Identity}
		s.listed.number = opts.Directory.join(s)
	}
	return s
}

// ActiveDomain returns the domain USE made active, or "".
func (s *Session) ActiveDomain() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// InTransaction reports the open transaction's domain and the number of
// queued steps; ok is false when no transaction is open. A transaction idle
// past Options.TransactionIdleTimeout is still reported until the next
// statement reverts it.
func (s *Session) InTransaction() (domain string, pending int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		return "", 0, false
	}
	return s.tx.domain, len(s.tx.steps), true
}

// Attached returns the domains whose clocks the session follows, including
// attachments that have ended (their end frame sent) and not yet been
// released by a later attach or detach.
func (s *Session) Attached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.attachments))
	for _, a := range s.attachments {
		out = append(out, a.domain)
	}
	return out
}

// ExecText plans and runs every statement of text in order and returns their
// results. It stops at the first error and returns the results before it;
// the error is a *follow.StatementError with the failing statement's
// position (a syntax or literal error where the text is wrong, the
// statement's start for a refusal), whose Kind is the typed cause, or
// ErrClosed itself once the session is closed. Statements before a syntax
// error run; nothing after it does.
func (s *Session) ExecText(ctx context.Context, text string) ([]wire.Result, error) {
	if s.ctx.Err() != nil {
		return nil, ErrClosed // text that would not parse included
	}
	rs, err := planner.RunScript(ctx, text, s.Exec)
	return rs, follow.ScriptFailure(err)
}

// Exec runs one planned statement on the session's request lane and returns
// its reply. A failure is a *follow.StatementError at the statement's
// position whose Kind is the typed cause: one of this package's errors, a
// *lifecycle.Error, a catalog or runtime error, or the context's error. On a closed session,
// and for a request that Close ended, it is ErrClosed, unpositioned.
//
// An ATTACH DOMAIN CLOCK whose request ends while it waits for the node's
// first installation keeps its place on the lane until that installation
// or the end of the session, so later requests run after it; its reply is
// not returned, and nothing is attached.
func (s *Session) Exec(ctx context.Context, p planner.Plan) (wire.Result, error) {
	return s.exec(ctx, p, nil)
}

// RowSink receives one chunk of a streamed result set (wire.RowSink).
type RowSink = wire.RowSink

// ExecRows is Exec for a consumer that takes a result's rows as they are
// produced: a LIST DOMAINS hands its rows to emit in chunks of at most
// ListChunkRows, in order, before it returns, and its result's set has the
// columns and no rows, so the rows the statement holds at once are bounded
// whatever the number of domains. Every other statement is Exec and never
// calls emit. emit runs on the caller's goroutine, inside the request.
func (s *Session) ExecRows(ctx context.Context, p planner.Plan, emit RowSink) (wire.Result, error) {
	if emit == nil {
		return wire.Result{}, errors.New("session: nil row sink")
	}
	return s.exec(ctx, p, emit)
}

func (s *Session) exec(ctx context.Context, p planner.Plan, emit RowSink) (wire.Result, error) {
	if p == nil {
		return wire.Result{}, errors.New("session: nil plan")
	}
	ev, err := s.serve(ctx, &call{req: Request{Plan: p, Sink: emit}})
	if err != nil {
		return wire.Result{}, err
	}
	return ev.Result, ev.Err
}

// positioned wraps err in a *follow.StatementError at the statement's
// position, unless it already is one or is ErrClosed, which is the
// session's and no statement's, so a position would only mislead.
func positioned(p planner.Plan, err error) error { return follow.Positioned(p.Pos(), err) }

// NextFrame returns the next control-lane frame, waiting until one is queued,
// ctx ends or the session closes (ErrClosed). Taking a tick frame empties
// its attachment's slot, so the next tick of that attachment queues anew.
// The places of attach replies in the lane, which every frame of their
// attachments follows, are passed over: the replies went to Exec. So are
// the events of submitted requests, which a reader of Next takes instead.
func (s *Session) NextFrame(ctx context.Context) (wire.Frame, error) {
	return s.lane.next(ctx)
}

// Pending returns the number of unread control-lane entries: state, error
// and end frames, submitted requests' events and queued tick slots, not the
// places of Exec's attach replies.
func (s *Session) Pending() int { return s.lane.len() }

// Close ends the session: it cancels requests in flight, stops every
// delivery task without a frame, waits for them, and discards unread frames.
// It is safe to call more than once and from any goroutine.
func (s *Session) Close() error {
	s.cancel()
	if s.listed != nil {
		s.listed.dir.leave(s)
	}
	s.mu.Lock()
	s.closed = true
	atts := s.attachments
	s.attachments = nil
	s.mu.Unlock()
	for _, a := range atts {
		a.stop()
	}
	s.lane.close()
	s.wg.Wait()
	return nil
}
