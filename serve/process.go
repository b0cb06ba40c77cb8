package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/metrics"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

// ErrConfig: a Config the process cannot run with. Errors of the member's
// own configuration are cluster.ErrConfig, and those of the API server's
// server.ErrConfig, as their packages return them.
var ErrConfig = errors.New("invalid serve configuration")

// ConsoleLogoutFileName is the file in the data directory where a
// process's console keeps its logouts across restarts.
const ConsoleLogoutFileName = "console-logouts.json"

// Config configures one process.
type Config struct {
	// Member configures the cluster member. With Insecure only its Node,
	// DataDir, Logger, RaftLogLevel, TimeSource, MaxClockOffset and
	// MaxDomains are read. APIAddr empty means Listener's address.
	Member cluster.Config
	// Insecure runs one node alone without TLS (nspl serve --insecure): no
	// raft listener, no peers, plain HTTP on a loopback Listener.
	Insecure bool
	// Listener is the API listener: sessions, the peer interconnect,
	// leave and remove, /healthz, /metrics and the console. Required; the
	// process owns it from Start on and closes it, also when Start fails.
	Listener net.Listener
	// MetricsListener, when set, serves /metrics, /livez and /readyz over
	// plain HTTP without authentication from the first moment of Start
	// (metrics.Starting until the node has opened). The process owns it
	// like Listener.
	MetricsListener net.Listener
	// Server configures the API server. Its Node, TLS, Insecure, Peer,
	// Cluster and Opened are the process's to fill and must be zero;
	// Logger nil means Member.Logger, TimeSource nil Member.TimeSource, and
	// with a Member.DataDir, UploadDir empty means the data directory and
	// ConsoleLogoutFile empty means ConsoleLogoutFileName in it.
	Server server.Config
	// Left, when set, runs once this member has left the cluster (LEAVE)
	// and the leave reply has been sent, so the program that runs the
	// process can stop it.
	Left func()
}

// Process is one running member and its listeners. All methods are safe
// for concurrent use.
type Process struct {
	cfg    Config
	logger *slog.Logger
	node   *node.Node
	member *cluster.Member // nil with Config.Insecure
	srv    *server.Server

	starting    *metrics.Starting // the metrics listener's handler; nil without Config.MetricsListener
	metricsStop func()            // nil without Config.MetricsListener

	serveDone chan struct{} // closed when the API server's Serve returned
	serveErr  error         // Serve's error; read after serveDone

	closeOnce sync.Once
	closeErr  error
}

// Start starts a process: it serves cfg.MetricsListener at once, builds
// the member (or the lone node) and its API server, serves cfg.Listener
// while the member opens (peers are answered by the member's handler,
// every other route 503 until it has opened), and returns once the member
// has started (cluster.Member.Open). ctx bounds the start. A process that
// does not start holds nothing open, its listeners included.
func Start(ctx context.Context, cfg Config) (*Process, error) {
	p, err := build(cfg)
	if err != nil {
		closeListeners(cfg)
		return nil, err
	}
	opened := make(chan struct{})
	p.srv, err = p.newServer(cfg.Server, opened)
	if err != nil {
		p.closeUnopened()
		return nil, err
	}
	go func() { // owned: Serve returns at Close
		defer close(p.serveDone)
		p.serveErr = p.srv.Serve(cfg.Listener)
	}()
	if p.member != nil {
		err = p.member.Open(ctx)
	} else {
		err = p.node.Open(ctx)
	}
	if err != nil {
		_ = p.srv.Close()
		<-p.serveDone
		p.closeUnopened()
		return nil, err
	}
	close(opened)
	if p.starting != nil {
		p.starting.Serve(p.node.MetricsHandler())
	}
	return p, nil
}

// build checks cfg, serves the metrics listener and builds the member or
// the lone node, not opened yet.
func build(cfg Config) (*Process, error) {
	if cfg.Listener == nil {
		return nil, fmt.Errorf("%w: an API listener is required", ErrConfig)
	}
	if err := checkServerConfig(cfg.Server); err != nil {
		return nil, err
	}
	if cfg.Insecure {
		if err := wire.CheckLoopback(cfg.Listener.Addr().String()); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if cfg.Member.APIAddr == "" {
		cfg.Member.APIAddr = cfg.Listener.Addr().String()
	}
	if cfg.Member.Logger == nil {
		cfg.Member.Logger = slog.Default()
	}
	p := &Process{cfg: cfg, logger: cfg.Member.Logger, serveDone: make(chan struct{})}
	if cfg.Insecure {
		n, err := node.New(node.Config{
			Name: cfg.Member.Node, DataDir: cfg.Member.DataDir, Logger: cfg.Member.Logger,
			RaftLogLevel: cfg.Member.RaftLogLevel, TimeSource: cfg.Member.TimeSource,
			MaxClockOffset: cfg.Member.MaxClockOffset, MaxDomains: cfg.Member.MaxDomains,
		})
		if err != nil {
			return nil, err
		}
		p.node = n
	} else {
		m, err := cluster.New(cfg.Member)
		if err != nil {
			return nil, err
		}
		p.member, p.node = m, m.Node()
	}
	if cfg.MetricsListener != nil {
		p.starting = &metrics.Starting{}
		p.metricsStop = ServeMetrics(cfg.MetricsListener, p.starting, cfg.Server.AllowedHosts, p.logger)
	}
	return p, nil
}

// closeUnopened closes what build started when the process does not start.
func (p *Process) closeUnopened() {
	if p.member != nil {
		_ = p.member.Close()
	} else {
		_ = p.node.Close()
	}
	if p.metricsStop != nil {
		p.metricsStop()
	}
	_ = p.cfg.Listener.Close() // Serve may never have run
}

// closeListeners closes the listeners of a process that was never built.
func closeListeners(cfg Config) {
	if cfg.Listener != nil {
		_ = cfg.Listener.Close()
	}
	if cfg.MetricsListener != nil {
		_ = cfg.MetricsListener.Close()
	}
}

// newServer is the one wiring of a member's API server: the node serves
// every session, the member's peer handler is mounted under the peer
// prefix, the member answers SHOW CLUSTER STATUS, leave and remove, and the
// node's certificate is presented with client certificates verified when
// given (a request is authenticated on its own, and /healthz is open).
func (p *Process) newServer(sc server.Config, opened <-chan struct{}) (*server.Server, error) {
	sc.Node, sc.Opened = p.node, opened
	if sc.Logger == nil {
		sc.Logger = p.logger
	}
	if sc.TimeSource == nil {
		sc.TimeSource = p.cfg.Member.TimeSource
	}
	if dir := p.cfg.Member.DataDir; dir != "" {
		if sc.UploadDir == "" {
			sc.UploadDir = dir
		}
		if sc.ConsoleLogoutFile == "" {
			sc.ConsoleLogoutFile = filepath.Join(dir, ConsoleLogoutFileName)
		}
	}
	if p.member == nil {
		sc.Insecure = true
	} else {
		sc.TLS = p.member.Material().ServerConfig(pkiServerOptions)
		sc.Peer = p.member.PeerHandler()
		sc.Cluster = memberView{m: p.member, left: p.cfg.Left}
	}
	return server.New(sc)
}

// NewServer builds a further API server for this process's member, wired
// as Start wired the process's own from sc (whose process-owned fields
// must be zero). The caller serves and closes it. Tests serve one on a
// second listener with other options (a bearer token, the console) and
// stop it alone, as a dying process's listener stops.
func (p *Process) NewServer(sc server.Config) (*server.Server, error) {
	if err := checkServerConfig(sc); err != nil {
		return nil, err
	}
	return p.newServer(sc, nil)
}

// Member returns the cluster member the process runs, nil for an
// insecure lone node. The test cluster reads members through it; a
// program that only serves needs nothing but Drain and Close.
func (p *Process) Member() *cluster.Member { return p.member }

// Addr returns the API listener's address.
func (p *Process) Addr() net.Addr { return p.cfg.Listener.Addr() }

// Sessions returns the number of sessions the API server has open.
func (p *Process) Sessions() int { return p.srv.Sessions() }

// Done is closed when the API server has stopped serving: after Close,
// or on its own when its listener failed (Err says why).
func (p *Process) Done() <-chan struct{} { return p.serveDone }

// Err returns why the API server stopped serving, nil after Close; it is
// meaningful once Done is closed.
func (p *Process) Err() error {
	select {
	case <-p.serveDone:
		return p.serveErr
	default:
		return nil
	}
}

// Drain refuses new sessions and lets the open ones finish their running
// statement and end, each with an end frame for every attached clock,
// until they have all ended or ctx ends (server.Server.Drain). The member
// keeps running: clock authority, progress and installation go on while
// sessions drain.
func (p *Process) Drain(ctx context.Context) error { return p.srv.Drain(ctx) }

// Close stops the API server (at once, or gracefully after a Drain), then
// the member and its node, then the metrics listener, and waits for every
// goroutine the process started. It does not leave the cluster. It is
// idempotent.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		errs := []error{p.srv.Close()}
		<-p.serveDone
		if p.member != nil {
			errs = append(errs, p.member.Close())
		} else {
			errs = append(errs, p.node.Close())
		}
		if p.metricsStop != nil {
			p.metricsStop()
		}
		p.closeErr = errors.Join(errs...)
	})
	return p.closeErr
}

// ServeMetrics is the one wiring of a metrics listener: it serves ln
// (plain HTTP, no credential) with h behind the Host check of a plain-HTTP
// listener (server.GuardLoopbackHosts: a loopback connection is answered
// only for a loopback name or one of allowedHosts) until the returned stop
// closes it and waits.
func ServeMetrics(ln net.Listener, h http.Handler, allowedHosts []string, logger *slog.Logger) (stop func()) {
	hs := metrics.NewHTTPServer(server.GuardLoopbackHosts(h, allowedHosts), slog.NewLogLogger(logger.Handler(), slog.LevelDebug))
	done := make(chan struct{})
	go func() { // owned: ends at stop
		defer close(done)
		_ = hs.Serve(ln) // ends at Close
	}()
	return func() {
		_ = hs.Close()
		<-done
	}
}
