package nspl

import (
	"context"
	"log/slog"
	"sync"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/session"
)

// Options configures an engine.
type Options struct {
	// DataDir makes the catalog durable in this directory. Empty keeps
	// everything in memory for the life of the engine.
	DataDir string
	// Logger receives every log line of the engine, the consensus
	// library's included, and its handler's level alone decides which are
	// written. Raft's routine election lines (one on every open) arrive at
	// slog.LevelDebug. Nil means slog.Default()'s handler limited to
	// warnings and errors, so an engine that works as it should writes
	// nothing.
	Logger *slog.Logger
	// TimeSource is the engine's only physical clock. Nil means the
	// system clock; tests pass a timesource.Fake. A *timesource.Virtual
	// runs the engine on virtual time (see Virtual time in virtual.go and
	// the package documentation): it moves only while a session waits for
	// a clock event, so runs repeat byte for byte.
	TimeSource timesource.Source
	// NodeName is the node name registered in the catalog. Empty means
	// "local".
	NodeName string
	// FrameLimit bounds each session's encoded frames (see
	// session.Options.FrameLimit). Zero means the session default.
	FrameLimit int
	// MaxDomains is the most domains a CREATE DOMAIN or a restore may
	// leave in the catalog; past it they fail with ErrDomainLimit. Zero
	// means node.DefaultMaxDomains (1,000,000).
	MaxDomains int
	// OverwriteArchives lets a BACKUP replace an existing file that is
	// not an nspl archive; without it such a file is refused
	// (ErrNotArchive) and left as it was.
	OverwriteArchives bool
}

// LocalIdentity is the identity SHOW ALL TRANSACTIONS shows for an
// embedded engine's sessions: every one serves the embedding program.
const LocalIdentity = "local"

// Engine is an embedded single-node nspl engine. Its methods are safe for
// concurrent use.
type Engine struct {
	node   *node.Node
	logger *slog.Logger
	limit  int
	// archives is every session's Archives: files on this machine.
	archives session.LocalArchives

	// virtual is the engine's clock when it runs on virtual time, nil
	// otherwise; stepMu serializes its steps.
	virtual *timesource.Virtual
	stepMu  sync.Mutex
	// directory lists the sessions for SHOW ALL TRANSACTIONS.
	directory *session.Directory

	mu       sync.Mutex
	closed   bool
	done     chan struct{} // closed by Close
	sessions map[*Session]struct{}
}

// Open starts an engine: a node on an embedded single-node catalog, with its
// committed domains installed and their tick producers running. ctx bounds
// the start only.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(warningsOnly{slog.Default().Handler()})
	}
	// Raft's output is filtered by Logger's handler alone: the catalog
	// passes every level down, with its routine election lines at Debug.
	logger = slog.New(catalog.RoutineRaftAtDebug(logger.Handler()))
	virtual, _ := opts.TimeSource.(*timesource.Virtual)
	var consensus timesource.Source // the TimeSource
	var incarnation uint64          // a random one
	if virtual != nil {
		consensus = timesource.System() // raft runs on real time
		if opts.DataDir == "" {
			// A run on virtual time repeats byte for byte, the
			// authority's incarnation in DESCRIBE DOMAIN included.
			incarnation = VirtualIncarnation
		}
	}
	n, err := node.Open(ctx, node.Config{
		Name:         opts.NodeName,
		DataDir:      opts.DataDir,
		Logger:       logger,
		RaftLogLevel: catalog.LevelTrace,
		TimeSource:   opts.TimeSource,
		MaxDomains:   opts.MaxDomains,

		ConsensusTimeSource: consensus,
		Incarnation:         incarnation,
	})
	if err != nil {
		return nil, err
	}
	return &Engine{node: n, virtual: virtual, directory: session.NewDirectory(), logger: logger, limit: opts.FrameLimit, archives: session.LocalArchives{Overwrite: opts.OverwriteArchives}, done: make(chan struct{}), sessions: make(map[*Session]struct{})}, nil
}

// warningsOnly is the default logger's handler: the process's default
// handler, passed warnings and errors only.
type warningsOnly struct{ slog.Handler }

func (h warningsOnly) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && h.Handler.Enabled(ctx, level)
}

func (h warningsOnly) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h warningsOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warningsOnly{h.Handler.WithAttrs(attrs)}
}

func (h warningsOnly) WithGroup(name string) slog.Handler {
	return warningsOnly{h.Handler.WithGroup(name)}
}

// NewSession opens a session on the engine. Close it when done; Engine.Close
// closes every session still open.
func (e *Engine) NewSession() (*Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	s := newSession(e, session.New(e.node, session.Options{Logger: e.logger, FrameLimit: e.limit, TimeSource: e.node.TimeSource(), Archives: e.archives,
		Directory: e.directory, Identity: LocalIdentity}))
	e.sessions[s] = struct{}{}
	return s, nil
}

// Close closes every open session, then the node, and waits for every
// goroutine the engine started. It is idempotent.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.done)
	open := make([]*Session, 0, len(e.sessions))
	for s := range e.sessions {
		open = append(open, s)
	}
	e.mu.Unlock()
	for _, s := range open {
		_ = s.Close()
	}
	return e.node.Close()
}

func (e *Engine) forget(s *Session) {
	e.mu.Lock()
	delete(e.sessions, s)
	e.mu.Unlock()
}
