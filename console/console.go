package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/guesslimit"
	"github.com/nspl-dev/nspl/session"
)

// Prefix is the path the console is served under.
const Prefix = "/console/"

// Defaults and bounds of the console.
const (
	// DefaultLoginLifetime is how long a login lasts when
	// Config.LoginLifetime is zero.
	DefaultLoginLifetime = 12 * time.Hour
	// HeartbeatInterval is how often an idle event stream is written to,
	// so that a dead connection is noticed and proxies keep it open.
	HeartbeatInterval = 15 * time.Second
	// RefreshInterval is how often a watch stream reads the domain list,
	// the selected domain and the cluster status again when no
	// installation woke it (availability and authority health are not
	// committed, so no installation reports them).
	RefreshInterval = time.Second
	// MaxStatementBytes bounds one statement box submission.
	MaxStatementBytes = 64 << 10
	// MaxReplSessions bounds the statement-box sessions one identity holds
	// on a node, on top of the server's own per-identity share.
	MaxReplSessions = 16
)

// ErrConfig: a configuration the console cannot run with.
var ErrConfig = errors.New("invalid console configuration")

// Host is what the console needs from the listener that serves it: a
// session admitted under the listener's limits, ended when the listener
// drains or closes.
type Host interface {
	// Begin admits one long-lived console session for r under the
	// listener's bounds (its total and its per-identity share; identity is
	// the caller the console authenticated). When it refuses, it has
	// written the refusal and returns ok false. Otherwise ctx ends when the
	// request ends or the listener drains or closes, and end must be
	// called once the session is over.
	Begin(w http.ResponseWriter, r *http.Request, identity string) (ctx context.Context, end func(), ok bool)
}

// Config configures the console.
type Config struct {
	// Engine serves every console session. Required.
	Engine session.Engine
	// Node is the serving node's name, shown in the header.
	Node string
	// Session configures every console session (cluster status, limits).
	// Its Archives is replaced: the console has no file to give BACKUP or
	// RESTORE, which it refuses.
	Session session.Options
	// Host admits console sessions. Required.
	Host Host
	// Token, when not empty, is the bearer token a browser logs in with.
	Token string
	// Guesses checks and counts every login's token (package guesslimit):
	// the listener's own limiter, so that logins and its bearer checks
	// share one limit. Nil gives the console a limiter of its own with the
	// package's defaults.
	Guesses *guesslimit.Limiter
	// Key signs login cookies and CSRF tokens: at least 32 secret bytes
	// that stay the same across restarts of the node, so a browser stays
	// logged in while its node restarts. Required.
	Key []byte
	// Certificate returns the identity of the request's verified client
	// certificate: ok false when it presents none, an error when it
	// presents one that is not a client's (a node certificate).
	Certificate func(r *http.Request) (identity string, ok bool, err error)
	// Open admits every caller without a credential, as AnonymousIdentity:
	// only for a listener on loopback without a token.
	Open bool
	// Secure marks the login cookie Secure and names it with the __Host-
	// prefix: set when the console is served over TLS.
	Secure bool
	// TokenIdentity and AnonymousIdentity name the callers the token and
	// Open admit, as the listener names them in its limits.
	TokenIdentity, AnonymousIdentity string
	// LogoutFile, when not empty, is the file the console keeps its
	// logouts in, so a logged-out login stays refused across a restart of
	// the node: a path the server chooses in its own data directory, never
	// one a client names. Empty keeps them in memory only.
	LogoutFile string
	// LoginLifetime bounds a login; zero means DefaultLoginLifetime.
	LoginLifetime time.Duration
	// TimeSource reads the time logins expire by and arms the streams'
	// heartbeats and refreshes; nil means the system's.
	TimeSource timesource.Source
	// Logger receives the console's logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics is the serving node's metrics registry, which the cluster
	// page's charts read (api/metrics); nil leaves the charts without
	// data.
	Metrics prometheus.Gatherer
}

// Console is the web console: an http.Handler for everything under Prefix.
type Console struct {
	cfg    Config
	mux    *http.ServeMux
	pages  *template.Template
	static http.Handler
	logger *slog.Logger

	mu      sync.Mutex
	logouts *logouts         // logins ended by logout
	repls   map[string]*repl // statement-box sessions by key
	held    map[string]int   // statement-box sessions reserved or open, by login

	statements atomic.Uint64 // statements run for callers (Statements)
}

//go:embed assets
var assets embed.FS

// New returns the console for cfg.
func New(cfg Config) (*Console, error) {
	switch {
	case cfg.Engine == nil:
		return nil, fmt.Errorf("%w: an engine is required", ErrConfig)
	case cfg.Host == nil:
		return nil, fmt.Errorf("%w: a host is required", ErrConfig)
	case len(cfg.Key) < 32:
		return nil, fmt.Errorf("%w: the signing key must have at least 32 bytes", ErrConfig)
	}
	if cfg.LoginLifetime <= 0 {
		cfg.LoginLifetime = DefaultLoginLifetime
	}
	if cfg.TimeSource == nil {
		cfg.TimeSource = timesource.System()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Certificate == nil {
		cfg.Certificate = func(*http.Request) (string, bool, error) { return "", false, nil }
	}
	if cfg.TokenIdentity == "" {
		cfg.TokenIdentity = "bearer-token"
	}
	if cfg.Guesses == nil {
		cfg.Guesses = guesslimit.New(cfg.Token, guesslimit.Config{TimeSource: cfg.TimeSource})
	}
	if cfg.AnonymousIdentity == "" {
		cfg.AnonymousIdentity = "anonymous"
	}
	cfg.Session.Archives = noArchives{}
	if cfg.Session.Logger == nil {
		cfg.Session.Logger = cfg.Logger
	}
	if cfg.Session.TimeSource == nil {
		cfg.Session.TimeSource = cfg.TimeSource
	}
	pages, err := template.ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: parse the page templates: %w", err)
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	out, err := loadLogouts(cfg.LogoutFile, cfg.TimeSource.Now())
	if err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, mux: http.NewServeMux(), pages: pages, logger: cfg.Logger,
		static:  http.StripPrefix(Prefix+"static/", http.FileServerFS(static)),
		logouts: out, repls: make(map[string]*repl), held: make(map[string]int)}
	c.routes()
	return c, nil
}

// routes mounts every console route. Each says who may call it:
//   - static assets and the login page: anyone (they hold no data);
//   - POST login: anyone with the token, from the console's own origin;
//   - pages and event streams: a logged-in browser, a client certificate,
//     or anyone on an open (loopback, tokenless) listener; the event
//     streams and whoami only from the console's own origin, whoever the
//     caller is;
//   - POST exec and logout: the same callers, with the CSRF token of
//     their login and from the console's own origin.
func (c *Console) routes() {
	c.mux.Handle("GET "+Prefix+"static/", c.static)
	c.mux.HandleFunc("GET "+Prefix+"login", c.serveLoginPage)
	c.mux.HandleFunc("POST "+Prefix+"login", c.serveLogin)
	c.mux.HandleFunc("POST "+Prefix+"logout", c.authorized(c.serveLogout, true))
	c.mux.HandleFunc("GET "+Prefix+"{$}", c.authorized(c.serveMain, false))
	c.mux.HandleFunc("GET "+Prefix+"cluster", c.authorized(c.serveCluster, false))
	c.mux.HandleFunc("GET "+Prefix+"api/whoami", sameOriginOnly(c.authorized(c.serveWhoami, false)))
	c.mux.HandleFunc("GET "+Prefix+"api/watch", sameOriginOnly(c.authorized(c.serveWatch, false)))
	c.mux.HandleFunc("GET "+Prefix+"api/clock", sameOriginOnly(c.authorized(c.serveClock, false)))
	c.mux.HandleFunc("GET "+Prefix+"api/repl", sameOriginOnly(c.authorized(c.serveRepl, false)))
	c.mux.HandleFunc("POST "+Prefix+"api/exec", c.authorized(c.serveExec, true))
	c.mux.HandleFunc("POST "+Prefix+"api/domain", c.authorized(c.serveDomainAction, true))
	c.mux.HandleFunc("GET "+Prefix+"api/metrics", sameOriginOnly(c.authorized(c.serveMetrics, false)))
}

// ServeHTTP serves the console's routes with the headers every response
// carries: no framing, no sniffing, no referrer to other sites, a strict
// content policy.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, Prefix+"static/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

// mac returns the HMAC-SHA256 of parts under the console's key, each part
// length-prefixed so no two lists of parts share a message.
func (c *Console) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, c.cfg.Key)
	for _, p := range parts {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(p)>>24), byte(len(p)>>16), byte(len(p)>>8), byte(len(p))
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// now is the console's UTC reading, in Unix nanoseconds.
func (c *Console) now() int64 { return c.cfg.TimeSource.Now() }

// newSession opens a statement session for the console's caller identity,
// which SHOW ALL TRANSACTIONS shows beside its transaction.
func (c *Console) newSession(identity string) *session.Session {
	opts := c.cfg.Session
	opts.Identity = identity
	return session.New(c.cfg.Engine, opts)
}
