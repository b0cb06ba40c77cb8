package nspl

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/runtime/timesource"
	"github.com/nspl-dev/nspl/session"
)

// ErrClosed: the engine or session is closed.
var ErrClosed = errors.New("nspl: engine or session is closed; open a new one")

// Options configures an engine.
type Options struct {
	// DataDir makes the catalog durable in this directory. Empty keeps
	// everything in memory for the life of the engine.
	DataDir string
	// Logger receives the engine's logs. Nil means slog.Default().
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of the consensus library's own
	// output that reaches Logger; the zero value is Info.
	RaftLogLevel slog.Level
	// TimeSource is the engine's only physical clock. Nil means the
	// system clock; tests pass a timesource.Fake.
	TimeSource timesource.Source
	// NodeName is the node name registered in the catalog. Empty means
	// "local".
	NodeName string
	// FrameLimit bounds each session's encoded frames (see
	// session.Options.FrameLimit). Zero means the session default.
	FrameLimit int
}

// Engine is an embedded single-node nspl engine. Its methods are safe for
// concurrent use.
type Engine struct {
	node   *node.Node
	logger *slog.Logger
	limit  int

	mu       sync.Mutex
	closed   bool
	sessions map[*Session]struct{}
}

// Open starts an engine: a node on an embedded single-node catalog, with its
// committed domains installed and their tick producers running. ctx bounds
// the start only.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	n, err := node.Open(ctx, node.Config{
		Name:         opts.NodeName,
		DataDir:      opts.DataDir,
		Logger:       opts.Logger,
		RaftLogLevel: opts.RaftLogLevel,
		TimeSource:   opts.TimeSource,
	})
	if err != nil {
		return nil, err
	}
	return &Engine{node: n, logger: opts.Logger, limit: opts.FrameLimit, sessions: make(map[*Session]struct{})}, nil
}

// NewSession opens a session on the engine. Close it when done; Engine.Close
// closes every session still open.
func (e *Engine) NewSession() (*Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	s := newSession(e, session.New(e.node, session.Options{Logger: e.logger, FrameLimit: e.limit, TimeSource: e.node.TimeSource()}))
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
