package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/internal/guesslimit"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxSessions bounds concurrent sessions when Config.MaxSessions is
// zero.
const DefaultMaxSessions = 1024

// Sentinel errors of the server's configuration.
var (
	// ErrConfig: a configuration the server cannot run with.
	ErrConfig = errors.New("invalid server configuration")
	// ErrInsecureAddress: --insecure asked for a listener that is not on a
	// loopback address.
	ErrInsecureAddress = wire.ErrInsecureAddress
	// ErrUploadStorage: the node could not spool an uploaded archive to
	// its upload directory (Config.UploadDir); free space there.
	ErrUploadStorage = errors.New("upload storage failed")
)

// Engine is what the server serves sessions on: a session.Engine that also
// names itself, in the welcome and in leave's reply, and lends its logger.
// *node.Node implements it; server does not import node.
type Engine interface {
	session.Engine
	// Name is the serving node's name.
	Name() string
	// Logger is the node's logger, the server's when Config.Logger is nil.
	Logger() *slog.Logger
	// MetricsRegistry is the node's Prometheus registry: the server
	// registers its families into it and serves it on /metrics.
	MetricsRegistry() *prometheus.Registry
}

// Cluster is what the server needs from a cluster member. A single embedded
// node has none (Config.Cluster nil).
type Cluster interface {
	// Status answers SHOW CLUSTER STATUS.
	Status(ctx context.Context) (wire.ClusterStatus, error)
	// Leave removes the serving node from the cluster. When the Cluster
	// also has a Left() method, the server calls it once the leave reply
	// has been sent, so the process can stop.
	Leave(ctx context.Context) error
	// Remove removes the named node from the cluster; a node that is
	// still live only with force.
	Remove(ctx context.Context, name string, force bool) error
}

// Config configures a Server.
type Config struct {
	// Node serves every session. Required.
	Node Engine
	// TLS is the listener's TLS configuration (pki's ServerConfig): it must
	// present the node's certificate and verify client certificates against
	// the cluster CA. Required unless Insecure.
	TLS *tls.Config
	// Insecure serves plain HTTP (unencrypted HTTP/2) and is refused on any
	// address but loopback. Client certificates do not exist then; a Token,
	// when set, is still required.
	Insecure bool
	// Token, when not empty, admits a client that presents it as
	// "Authorization: Bearer TOKEN" without a client certificate.
	Token string
	// Peer is mounted under wire.PeerPrefix and reached only by clients whose
	// verified certificate names a node; nil answers 404 there.
	Peer http.Handler
	// Cluster answers SHOW CLUSTER STATUS, leave and remove; nil means a
	// single node that shows itself alone and refuses leave and remove.
	Cluster Cluster
	// Opened, when set, is closed once Node has opened: until then every
	// route but Peer's answers 503 and asks the client to retry, so the
	// listener can serve while the node starts (the peer handler answers
	// for a starting member itself). Nil means Node is open already.
	Opened <-chan struct{}
	// Session configures every session; its ClusterStatus is replaced by
	// Cluster's when Cluster is set.
	Session session.Options
	// MaxSessions bounds concurrent sessions; zero means DefaultMaxSessions.
	MaxSessions int
	// Limits bounds connections, sessions and messages; zero fields take
	// their defaults.
	Limits Limits
	// TimeSource arms the sessions' idle and message timers, and is the
	// sessions' clock unless Session names one; nil means the system's.
	// (Connection timeouts are net/http's own.)
	TimeSource timesource.Source
	// MaxArchiveUploads bounds the archives (RESTORE, DESCRIBE BACKUP) the
	// server receives at once over all sessions; one more is refused with
	// ErrArchiveBusy. Zero means DefaultMaxArchiveUploads.
	MaxArchiveUploads int
	// MaxArchiveUploadsPerIdentity is each identity's share of
	// MaxArchiveUploads (at most all of them); one more of that identity
	// is refused with ErrArchiveBusy. Zero means
	// DefaultMaxArchiveUploadsPerIdentity.
	MaxArchiveUploadsPerIdentity int
	// UploadDir is where uploaded archives are spooled while they arrive,
	// in temporary files unlinked as soon as they are made: the node's
	// data directory, for nspl serve. Empty means os.TempDir().
	UploadDir string
	// uploadCap, when set (tests), lowers the largest archive a client may
	// upload below backup.MaxArchiveBytes.
	uploadCap int
	// Logger receives the server's logs; nil means the node's logger.
	Logger *slog.Logger
	// Console serves the web console under /console/ (package console):
	// its pages and event streams need a client certificate or a login
	// with Token, and its sessions count as sessions in MaxSessions and
	// each identity's share.
	Console bool
	// ConsoleLogoutFile, when not empty, is where the console keeps its
	// logouts across restarts (console.Config.LogoutFile): a file in the
	// node's own data directory.
	ConsoleLogoutFile string
	// AllowedHosts are the names, besides the loopback ones (and, over
	// TLS, those of the node's certificate), that a request's Host may
	// carry on a listener that checks it (plain HTTP, or TLS on a loopback
	// address; see hosts.go): bare host names that
	// wire.ValidateAllowedHost accepts.
	AllowedHosts []string
}

// Server is a node's API listener: the session protocol, leave and remove,
// the peer interconnect, /healthz and /metrics, behind authentication.
//
// Serve runs until Close. Every session runs on goroutines its request owns;
// Close ends them all and waits.
type Server struct {
	cfg    Config
	logger *slog.Logger
	mux    *http.ServeMux
	http   *http.Server

	ctx    context.Context // ends at Close; every session ends with it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sessions      atomic.Int64
	sessionsTotal atomic.Uint64
	// statements counts the statements the sessions answered, by outcome
	// (nspl_statements_total).
	statements  struct{ ok, failed atomic.Uint64 }
	console     atomic.Pointer[console.Console]
	admission   admission
	closes      sessionCloses
	conns       connWatch
	mu          sync.Mutex
	closed      bool          // set by Close; no session is admitted after it
	draining    chan struct{} // closed by Drain
	live        map[*session.Session]context.CancelFunc
	resumes     *resumptions // transactions held for reconnecting clients
	uploadSlots uploadSlots  // the archives being received
	uploadBytes atomic.Int64 // bytes spooled by the uploads being received
	uploadCap   int          // the largest upload, backup.MaxArchiveBytes
	checkHost   atomic.Bool  // Serve's listener is plain HTTP or on loopback

	guesses *guesslimit.Limiter // counts bearer token guesses; nil without a token

	collector  serverCollector
	registered bool // collector is in the node's registry; guarded by mu
}

// New returns a server for cfg. It listens nowhere until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Node == nil {
		return nil, fmt.Errorf("%w: a node is required", ErrConfig)
	}
	if cfg.TLS == nil && !cfg.Insecure {
		return nil, fmt.Errorf("%w: TLS material is required unless insecure plain HTTP on loopback is asked for", ErrConfig)
	}
	if cfg.TLS != nil && cfg.Insecure {
		return nil, fmt.Errorf("%w: give TLS material or insecure, not both", ErrConfig)
	}
	if err := ValidateAllowedHosts(cfg.AllowedHosts); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	limits, err := cfg.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Limits = limits
	if cfg.TimeSource == nil {
		cfg.TimeSource = timesource.System()
	}
	if cfg.MaxArchiveUploads <= 0 {
		cfg.MaxArchiveUploads = DefaultMaxArchiveUploads
	}
	if cfg.MaxArchiveUploadsPerIdentity <= 0 {
		cfg.MaxArchiveUploadsPerIdentity = DefaultMaxArchiveUploadsPerIdentity
	}
	cfg.MaxArchiveUploadsPerIdentity = min(cfg.MaxArchiveUploadsPerIdentity, cfg.MaxArchiveUploads)
	if cfg.uploadCap <= 0 || cfg.uploadCap > backup.MaxArchiveBytes {
		cfg.uploadCap = backup.MaxArchiveBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = cfg.Node.Logger()
	}
	if cfg.Cluster != nil {
		cfg.Session.ClusterStatus = cfg.Cluster.Status
	}
	if cfg.Session.Logger == nil {
		cfg.Session.Logger = cfg.Logger
	}
	if cfg.Session.TimeSource == nil {
		cfg.Session.TimeSource = cfg.TimeSource
	}
	if cfg.Session.Directory == nil {
		cfg.Session.Directory = session.NewDirectory()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var guesses *guesslimit.Limiter
	if cfg.Token != "" {
		guesses = guesslimit.New(cfg.Token, guesslimit.Config{PerAddress: cfg.Limits.TokenGuessesPerAddress,
			Global: cfg.Limits.TokenGuesses, Window: TokenGuessWindow, TimeSource: cfg.TimeSource})
	}
	s := &Server{guesses: guesses, cfg: cfg, logger: cfg.Logger, mux: http.NewServeMux(), ctx: ctx, cancel: cancel, live: make(map[*session.Session]context.CancelFunc),
		uploadSlots: uploadSlots{max: cfg.MaxArchiveUploads, share: cfg.MaxArchiveUploadsPerIdentity}, uploadCap: cfg.uploadCap, draining: make(chan struct{}),
		resumes: newResumptions(cfg.TimeSource, cfg.Limits.ResumeTimeout, cfg.Limits.MaxSessionsPerIdentity)}
	cfg.Session.Directory.SetHeld(s.resumes.list)
	s.mux.HandleFunc(wire.HealthPath, s.serveHealth)
	s.collector = serverCollector{s}
	s.registerMetrics()
	s.mux.Handle(wire.MetricsPath, s.authenticated(s.metricsHandler()))
	s.mux.Handle(wire.SessionPath, s.authenticated(http.HandlerFunc(s.serveSession)))
	s.mux.Handle(wire.LeavePath, s.authenticated(http.HandlerFunc(s.serveLeave)))
	s.mux.Handle(wire.RemovePath, s.authenticated(http.HandlerFunc(s.serveRemove)))
	if cfg.Peer != nil {
		s.mux.Handle(wire.PeerPrefix, s.nodesOnly(cfg.Peer))
	}
	if cfg.Console {
		if err := s.mountConsole(); err != nil {
			cancel()
			s.unregisterMetrics()
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	// The header-read timeout is also net/http's TLS handshake deadline;
	// IdleTimeout closes an HTTP/2 connection without open streams (one
	// that sent its preface and nothing more) and an idle HTTP/1.1 one.
	hs := &http.Server{Handler: served(guardHost(s.whenOpened(s.mux), append(certificateNames(cfg.TLS), cfg.AllowedHosts...), func(*http.Request) bool { return s.checkHost.Load() })), ReadHeaderTimeout: cfg.Limits.HandshakeTimeout, IdleTimeout: cfg.Limits.IdleTimeout,
		ConnState: s.conns.state, ConnContext: s.conns.context,
		// Every request's context ends at Close, so a peer's long-lived
		// stream does not hold a drained server's Close for its grace.
		BaseContext: func(net.Listener) context.Context { return s.ctx },
		ErrorLog:    slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	if cfg.Insecure {
		protocols.SetUnencryptedHTTP2(true)
	} else {
		tc := cfg.TLS.Clone()
		if tc.MinVersion < tls.VersionTLS12 {
			tc.MinVersion = tls.VersionTLS12
		}
		if !containsString(tc.NextProtos, "h2") {
			tc.NextProtos = append([]string{"h2"}, tc.NextProtos...)
		}
		if cfg.Token != "" && tc.ClientAuth == tls.RequireAndVerifyClientCert {
			tc.ClientAuth = tls.VerifyClientCertIfGiven
		}
		hs.TLSConfig = tc
		protocols.SetHTTP2(true)
	}
	hs.Protocols = &protocols
	s.http = hs
	return s, nil
}

// Handler returns the server's routes, for tests and for mounting.
func (s *Server) Handler() http.Handler { return s.mux }

// Listen opens the listener for addr, refusing a non-loopback address when
// the server is insecure.
func (s *Server) Listen(addr string) (net.Listener, error) {
	if s.cfg.Insecure {
		if err := wire.CheckLoopback(addr); err != nil {
			return nil, err
		}
	}
	return net.Listen("tcp", addr)
}

// Serve serves ln until Close. It returns nil after Close. When the server
// is insecure or ln is on a loopback address, a request whose Host is not a
// loopback name, a name of the node's certificate or one of
// Config.AllowedHosts gets 421 Misdirected Request (hosts.go).
func (s *Server) Serve(ln net.Listener) error {
	if s.cfg.Insecure {
		if err := wire.CheckLoopback(ln.Addr().String()); err != nil {
			_ = ln.Close()
			return err
		}
	}
	if s.cfg.Insecure || isLoopbackAddr(ln.Addr().String()) {
		s.checkHost.Store(true)
	}
	var err error
	if s.cfg.Insecure {
		err = s.http.Serve(ln)
	} else {
		err = s.http.ServeTLS(ln, "", "")
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// closeGrace bounds how long Close after a Drain lets connections send
// what their handlers already wrote before it closes them.
const closeGrace = 2 * time.Second

// Close stops listening, ends every session and waits for their goroutines.
// After a Drain it first shuts the listener down gracefully, for at most
// closeGrace, so that what the drained sessions wrote last (their end
// frames) leaves the connection before it is closed: HTTP/2 writes a
// handler's flushed data asynchronously, and closing the connection at once
// can drop it. Without a Drain it closes at once.
func (s *Server) Close() error {
	// Marked under mu, which admits sessions, so that every wg.Add
	// happens before this Wait and no session outlives Close.
	s.mu.Lock()
	s.closed = true
	drained := false
	select {
	case <-s.draining:
		drained = true
	default:
	}
	s.mu.Unlock()
	s.cancel()
	if drained {
		s.shutdownGracefully()
	}
	defer s.resumes.drop()
	err := s.http.Close()
	s.wg.Wait()
	s.unregisterMetrics()
	return err
}

// shutdownGracefully stops the listener and waits, for at most closeGrace
// on the server's time source, until every connection has sent what it
// holds and gone idle.
func (s *Server) shutdownGracefully() {
	ctx, cancel := context.WithCancel(context.Background())
	t := s.cfg.TimeSource.NewTimer(closeGrace)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned: ends when the grace passes or Shutdown returns
		defer wg.Done()
		select {
		case <-t.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	_ = s.http.Shutdown(ctx)
	cancel()
	wg.Wait()
	t.Stop()
}

// Drain is the first phase of a graceful shutdown. It refuses new sessions
// and asks every open one to finish: a session completes the statement it
// is running, sends each clock attachment it holds an end frame with
// reason NodeShutdown, and ends its stream. Drain waits until every session
// has ended or ctx ends, and returns ctx's error in the latter case. The
// listener keeps serving everything else (the interconnect, health and
// metrics), so the node's clocks keep running while sessions drain; Close
// then ends what is left. Drain is safe to call more than once.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	select {
	case <-s.draining:
	default:
		close(s.draining)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CloseSessions ends every open session's stream, as a lost transport
// would; clients reconnect and attach their clocks again. The listener keeps
// serving.
func (s *Server) CloseSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cancel := range s.live {
		cancel()
	}
}

// Sessions returns the number of open sessions.
func (s *Server) Sessions() int { return int(s.sessions.Load()) }

// Attachments returns the number of clock attachments the open sessions
// hold.
func (s *Server) Attachments() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sess := range s.live {
		n += len(sess.Attached())
	}
	return n
}

// authenticated admits a request with a client certificate (URI SAN
// nspl-client://NAME) the TLS layer verified against the cluster CA, or with
// the configured bearer token; an insecure server without a token admits
// everyone (it listens on loopback only). A node certificate is refused: a
// node is not an operator, and the routes behind this check act with a
// client's authority. The bearer scheme is matched case-insensitively, as
// RFC 7235 says auth schemes are. Every presented token is a guess the
// server's one guess limiter checks and counts in one step (shared with
// the console's login); a refused guess is answered 429 with Retry-After.
func (s *Server) authenticated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			id, err := pki.PeerIdentity(*r.TLS)
			if err != nil || id.Role != pki.RoleClient {
				http.Error(w, "a node certificate is not a client identity: present a client certificate (nspl cert client NAME) or a bearer token", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if s.cfg.Token != "" {
			got, ok := bearerToken(r.Header.Get("Authorization"))
			if ok {
				switch v := s.guesses.Try(r.RemoteAddr, got); v.Outcome {
				case guesslimit.Right:
					h.ServeHTTP(w, r)
					return
				case guesslimit.Refused:
					refuseGuess(w, v)
					return
				}
			}
			http.Error(w, "authentication required: present a client certificate signed by the cluster CA or a valid bearer token", http.StatusUnauthorized)
			return
		}
		if s.cfg.Insecure {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "authentication required: present a client certificate signed by the cluster CA", http.StatusUnauthorized)
	})
}

// refuseGuess answers a token guess the limiter refused: 429, with the
// seconds until its window ends in Retry-After and a body saying what to do.
func refuseGuess(w http.ResponseWriter, v guesslimit.Verdict) {
	w.Header().Set("Retry-After", strconv.FormatInt(v.RetryAfterSeconds(), 10))
	http.Error(w, v.Message(), http.StatusTooManyRequests)
}

// bearerToken returns the credentials of an Authorization header value of
// the Bearer scheme, matching the scheme name case-insensitively and
// allowing the spaces RFC 7235 allows between scheme and credentials.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
}

// nodesOnly admits only verified certificates; which identity may do what is
// the peer handler's business.
func (s *Server) nodesOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			http.Error(w, "the peer interconnect requires a node certificate signed by the cluster CA", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if s.ctx.Err() != nil {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
