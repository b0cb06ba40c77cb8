package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/runtime/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// Backoff of a refused restoration and of reconnecting: one second, doubling
// with each refusal up to thirty seconds.
const (
	InitialBackoff = time.Second
	MaxBackoff     = 30 * time.Second
)

// Defaults of Config.
const (
	// DefaultRequestTimeout bounds a restoration request; one left
	// unanswered longer ends the session, and the next one attaches again.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultCancelGrace bounds the wait for the answer to a cancelled
	// request before the client stops waiting for it.
	DefaultCancelGrace = 5 * time.Second
)

// Sentinel errors of the package.
var (
	// ErrConfig: a configuration the client cannot use.
	ErrConfig = errors.New("invalid client configuration")
	// ErrInsecureURL: an http:// URL whose host is not loopback.
	ErrInsecureURL = errors.New("plain http:// is allowed only to a loopback address; use https:// with the cluster CA")
	// ErrUnauthorized: the server refused the credentials.
	ErrUnauthorized = errors.New("the server refused the client's credentials; give a client certificate signed by the cluster CA or a valid token")
	// ErrProtocolVersion: the server speaks another protocol version.
	ErrProtocolVersion = errors.New("session protocol version mismatch")
	// ErrConnectionLost: the stream ended; a request in flight has an
	// unknown outcome. The client reconnects.
	ErrConnectionLost = errors.New("connection to the node was lost; a statement that was running may or may not have taken effect, so check before running it again")
	// ErrClosed: the client was closed, or the server's session refused a
	// statement as closed. It is wire.ErrClosed, the one closed error of
	// the module (nspl.ErrClosed, session.ErrClosed), and is returned
	// unpositioned, as a local session returns it.
	ErrClosed = wire.ErrClosed
)

// ConnectError is a failed attempt to open a session on URL.
type ConnectError struct {
	URL string
	Err error
}

// Error says which URL failed, why, and what to do about the common
// causes.
func (e *ConnectError) Error() string {
	msg := "connect to " + e.URL + ": " + e.Err.Error()
	if hint := connectHint(e.Err); hint != "" {
		msg += "; " + hint
	}
	return msg
}

// connectHint says what to do about a failed connection's cause, or ""
// when the cause speaks for itself (ErrUnauthorized, ErrProtocolVersion).
func connectHint(err error) string {
	var hostname x509.HostnameError
	var unknownCA x509.UnknownAuthorityError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &hostname):
		return "the node's certificate does not name the URL's host; connect to a name or address it was issued for (nspl cert node NAME --host HOST adds one)"
	case errors.As(err, &unknownCA):
		return "the node's certificate is not signed by a CA this client trusts; give the cluster's CA certificate (nspl --ca FILE)"
	case errors.As(err, &record):
		return "the node does not speak TLS there; if it serves plain HTTP (--insecure), connect with http://"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing listens there; check that the node runs and that the URL names its --api-addr"
	}
	return ""
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// NoticeKind says what a Notice reports.
type NoticeKind uint8

// Notice kinds.
const (
	// Interrupted: the session ended; every followed clock keeps its latest
	// state and is attached again on the next session.
	Interrupted NoticeKind = iota + 1
	// Reconnected: a new session is open on Node.
	Reconnected
	// Restored: a followed clock was attached again; its state frame
	// follows.
	Restored
	// RestoreRefused: the new session refused to attach a followed clock
	// again; it is retried after Retry.
	RestoreRefused
	// TransactionLost: the session that held an open transaction ended.
	TransactionLost
)

// Notice reports what the client did on its own: interruptions, reconnects,
// restorations and refusals.
type Notice struct {
	Kind   NoticeKind
	Domain string
	Node   string
	Err    error
	Retry  time.Duration
}

// String renders the notice as one line.
func (n Notice) String() string {
	switch n.Kind {
	case Interrupted:
		return fmt.Sprintf("connection lost (%v); reconnecting", n.Err)
	case Reconnected:
		return "reconnected to node '" + n.Node + "'"
	case Restored:
		return "clock of domain '" + n.Domain + "' attached again"
	case RestoreRefused:
		return fmt.Sprintf("attaching the clock of domain '%s' again was refused (%v); retrying in %s", n.Domain, n.Err, n.Retry)
	case TransactionLost:
		return "the open transaction on domain '" + n.Domain + "' was discarded with the lost session"
	}
	return "notice"
}

// Config configures a Client.
type Config struct {
	// URLs are the nodes to connect to, tried in order: https://HOST:PORT,
	// or http://127.0.0.1:PORT for a node serving plain HTTP on loopback.
	URLs []string
	// TLS trusts the cluster CA and, for certificate authentication,
	// presents a client certificate. Nil uses the system roots.
	TLS *tls.Config
	// Token is sent as a bearer token when not empty.
	Token string
	// Transport overrides the HTTP/2 transport built from TLS (tests).
	Transport http.RoundTripper
	// TimeSource arms backoff and timeout timers; nil means the system's.
	TimeSource timesource.Source
	// Notify receives notices on the client's goroutines; it must not
	// block. Nil drops them.
	Notify func(Notice)
	// RequestTimeout bounds a restoration request; zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// CancelGrace bounds the wait for a cancelled request's answer; zero
	// means DefaultCancelGrace.
	CancelGrace time.Duration
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
	// OverwriteArchives lets a BACKUP replace an existing file at its path
	// that is not an nspl archive; without it such a file is refused
	// (backup.ErrNotArchive) and left as it was. A missing file, an empty
	// one or an older archive is always replaced.
	OverwriteArchives bool
}

// followedClock is one clock the client follows.
type followedClock struct {
	conn       *conn         // the session holding the attachment; nil while interrupted
	attachment uint64        // its number in that session
	backoff    time.Duration // the next restoration refusal's wait
	retryAt    time.Duration // monotonic instant of the next restoration; 0 none
}

// Client is a remote session: the same statements, replies, positioned
// errors and clock frames as a local session.Session, served by a node over
// the session protocol.
//
// Exec and ExecText run one request at a time. Clock, NextEvent and Events
// may run concurrently with them. On a lost transport the client opens a new session (trying
// the URLs in order, one second apart doubling to thirty), restores the
// active domain and attaches every followed clock again before any other
// request runs on it; a restoration the new session refuses is retried after
// one second, doubling to thirty, and one refused as not found ends the
// attachment with DomainRemoved. Close ends everything and waits.
type Client struct {
	cfg       Config
	transport http.RoundTripper
	src       timesource.Source
	logger    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	lane   chan struct{} // holding its token runs a request or a restoration
	nextID atomic.Uint64
	follow *follow.Follow // the followed clocks and their events
	kick   chan struct{}  // wakes the supervisor

	mu       sync.Mutex
	conn     *conn
	state    wire.SessionState
	followed map[string]*followedClock
}

// Dial opens a session on the first URL that answers and returns the client.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, fmt.Errorf("%w: no URL to connect to", ErrConfig)
	}
	var secure, plain bool
	for _, u := range cfg.URLs {
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("%w: URL %q: give https://HOST:PORT", ErrConfig, u)
		}
		switch pu.Scheme {
		case "https":
			secure = true
		case "http":
			plain = true
			host := pu.Host
			if pu.Port() == "" {
				host += ":80"
			}
			if err := wire.CheckLoopback(host); err != nil {
				return nil, fmt.Errorf("%w (got %q)", ErrInsecureURL, u)
			}
		default:
			return nil, fmt.Errorf("%w: URL %q: the scheme must be https or http", ErrConfig, u)
		}
	}
	if secure && plain {
		return nil, fmt.Errorf("%w: mix of http:// and https:// URLs", ErrConfig)
	}
	c := &Client{cfg: cfg, transport: cfg.Transport, src: cfg.TimeSource, logger: cfg.Logger,
		lane: make(chan struct{}, 1), follow: follow.NewFollow(ErrClosed), kick: make(chan struct{}, 1), followed: make(map[string]*followedClock)}
	if c.src == nil {
		c.src = timesource.System()
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.cfg.RequestTimeout <= 0 {
		c.cfg.RequestTimeout = DefaultRequestTimeout
	}
	if c.cfg.CancelGrace <= 0 {
		c.cfg.CancelGrace = DefaultCancelGrace
	}
	if c.transport == nil {
		c.transport = newTransport(cfg.TLS, plain)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lane <- struct{}{}
	if _, err := c.connect(ctx); err != nil {
		c.cancel()
		c.wg.Wait()
		return nil, err
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.supervise()
	}()
	return c, nil
}

// newTransport returns an HTTP/2-only transport: TLS with h2 forced on, or
// unencrypted HTTP/2 with prior knowledge for a loopback http:// URL.
func newTransport(tc *tls.Config, plain bool) *http.Transport {
	tr := &http.Transport{
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}
	var p http.Protocols
	if plain {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
		if tc != nil {
			tc = tc.Clone()
			if tc.MinVersion < tls.VersionTLS12 {
				tc.MinVersion = tls.VersionTLS12
			}
		}
		tr.TLSClientConfig = tc
	}
	tr.Protocols = &p
	return tr
}

// Node returns the name of the node serving the current session ("" while
// disconnected).
func (c *Client) Node() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return ""
	}
	return c.conn.node
}

// ActiveDomain returns the session's active domain as the last reply
// reported it.
func (c *Client) ActiveDomain() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Active
}

// InTransaction reports the open transaction as the last reply reported it.
func (c *Client) InTransaction() (domain string, pending int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.TxDomain, c.state.TxPending, c.state.InTx
}

// Followed returns the domains whose clocks the client follows, sorted.
func (c *Client) Followed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.followed))
	for d := range c.followed {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Pending returns the number of unread clock events.
func (c *Client) Pending() int { return c.follow.Pending() }

// Clock returns the followed clock of domain, as a local session's is: the
// observation of the attach reply or the newest state, and the newest tick
// of its generation. It reports false when the client does not follow the
// domain. A clock interrupted by a lost transport is still followed and
// resumes when it is attached again.
func (c *Client) Clock(domain string) (follow.Clock, bool) { return c.follow.Clock(domain) }

// NextEvent returns the oldest unread clock event, waiting until one arrives,
// ctx ends or the client closes (ErrClosed), coalesced as a local session's
// are. A node draining for shutdown ends the attachment with reason
// wire.NodeShutdown without ending the following: that end is an event, the
// clock stays followed, and the state of its restoration comes after it.
func (c *Client) NextEvent(ctx context.Context) (follow.ClockEvent, error) {
	return c.follow.NextEvent(ctx)
}

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the client closes.
func (c *Client) Events(ctx context.Context) iter.Seq[follow.ClockEvent] {
	return c.follow.Events(ctx)
}

// Exec runs one planned statement on the serving node. A failure is a
// *grammar.Error at the plan's position, whose Kind unwraps to the same
// sentinel a local session's would (or is a *lifecycle.Error), except that
// ErrClosed, the client's or the server session's, is returned
// unpositioned, as a local session returns it.
//
// The archive files of BACKUP, RESTORE and DESCRIBE BACKUP are on this
// machine: a BACKUP's archive comes back with its reply and is written
// here, and the archive a RESTORE or DESCRIBE BACKUP names is read here and
// sent up for the node to verify.
func (c *Client) Exec(ctx context.Context, p planner.Plan) (wire.Result, error) {
	if p == nil {
		return wire.Result{}, errors.New("client: nil plan")
	}
	kind := callPlain
	req := wire.ClientMessage{Type: wire.TypeExec, Text: p.String()}
	var upload []byte
	switch p.(type) {
	case planner.Attach:
		kind = callAttach
	case planner.Detach:
		kind = callDetach
	case planner.Backup, planner.Restore, planner.DescribeBackup:
		var err error
		if req.Archive, upload, err = c.prepareArchive(p); err != nil {
			return wire.Result{}, &grammar.Error{Pos: p.Pos(), Msg: err.Error(), Kind: err}
		}
		if _, ok := p.(planner.Backup); ok {
			kind = callBackup
		}
	}
	m, err := c.request(ctx, req, kind, 0, upload)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return wire.Result{}, err
		}
		return wire.Result{}, &grammar.Error{Pos: p.Pos(), Msg: err.Error(), Kind: err}
	}
	if m.Type == wire.TypeError && kind == callDetach && m.Error.Code == "not_attached" {
		if r, ok := c.dropPendingRestoration(p); ok {
			return r, nil
		}
	}
	if m.Type == wire.TypeError {
		ge := follow.DecodeError(m.Error)
		if errors.Is(ge, ErrClosed) {
			// The server's session is closed: its error, like a local
			// one, is no statement's and keeps no position.
			return wire.Result{}, ge.Kind
		}
		// The server's position is in the canonical text it was sent; the
		// caller's statement starts at the plan's position.
		ge.Pos = p.Pos()
		return wire.Result{}, ge
	}
	if kind == callBackup {
		if err := c.saveArchive(req.Archive.Name, m); err != nil {
			return wire.Result{}, &grammar.Error{Pos: p.Pos(), Msg: err.Error(), Kind: err}
		}
	}
	return result(m)
}

// ExecText plans every statement of text here and runs them in order,
// stopping at the first error, as session.Session.ExecText does (planner.RunScript).
func (c *Client) ExecText(ctx context.Context, text string) ([]wire.Result, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed // text that would not parse included
	}
	return planner.RunScript(ctx, text, c.Exec)
}

// dropPendingRestoration ends the following of the active domain's clock
// when a detach finds the session not holding it because its restoration is
// still pending: once the detach is answered no session holds the clock on
// the client's behalf, so the restoration must not happen later.
func (c *Client) dropPendingRestoration(p planner.Plan) (wire.Result, bool) {
	c.mu.Lock()
	domain := c.state.Active
	f := c.followed[domain]
	pending := f != nil && f.conn != c.conn
	if pending {
		delete(c.followed, domain)
	}
	c.mu.Unlock()
	if !pending {
		return wire.Result{}, false
	}
	c.follow.Released(domain)
	return wire.Result{Statement: p.String(), Domain: domain,
		Message: "stopped following the clock of domain '" + domain + "'; its restoration was still pending"}, true
}

// DomainNames returns the names of the serving node's domains, for
// completion.
func (c *Client) DomainNames(ctx context.Context) ([]string, error) {
	m, err := c.request(ctx, wire.ClientMessage{Type: wire.TypeDomains}, callDomains, 0, nil)
	if err != nil {
		return nil, err
	}
	return m.Names, nil
}

// Close ends the session and every goroutine of the client and waits.
func (c *Client) Close() error {
	c.cancel()
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn != nil {
		cn.close(ErrClosed)
	}
	c.follow.Close()
	c.wg.Wait()
	return nil
}

// acquire takes the request lane.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case <-c.lane:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
}

func (c *Client) release() { c.lane <- struct{}{} }

// request runs one request on the lane, connecting first if no session is
// open; upload is the archive sent ahead of it, if any.
func (c *Client) request(ctx context.Context, m wire.ClientMessage, kind callKind, timeout time.Duration, upload []byte) (wire.ServerMessage, error) {
	if c.ctx.Err() != nil {
		return wire.ServerMessage{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return wire.ServerMessage{}, err
	}
	if err := c.acquire(ctx); err != nil {
		return wire.ServerMessage{}, err
	}
	defer c.release()
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		var err error
		if cn, err = c.connect(ctx); err != nil {
			return wire.ServerMessage{}, err
		}
	}
	return c.roundTrip(ctx, cn, m, kind, timeout, upload)
}

// roundTrip sends upload, in archive pieces, and then m on cn and waits for
// its answer; the caller holds the lane. A cancelled ctx sends a cancel and
// waits CancelGrace for the answer; a timeout (restorations) ends the
// session instead.
func (c *Client) roundTrip(ctx context.Context, cn *conn, m wire.ClientMessage, kind callKind, timeout time.Duration, upload []byte) (wire.ServerMessage, error) {
	m.ID = c.nextID.Add(1)
	cl, err := cn.register(m.ID, kind)
	if err != nil {
		return wire.ServerMessage{}, err
	}
	if err := cn.sendArchive(m.ID, upload); err != nil {
		cn.forget(m.ID)
		cn.close(err)
		return wire.ServerMessage{}, err
	}
	if err := cn.send(m); err != nil {
		cn.forget(m.ID)
		cn.close(err)
		return wire.ServerMessage{}, err
	}
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := c.src.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C()
	}
	select {
	case r := <-cl.done:
		return r, nil
	case <-cn.lost:
		return wire.ServerMessage{}, cn.lostError()
	case <-timeoutC:
		err := fmt.Errorf("%w: no answer within %s", ErrConnectionLost, timeout)
		cn.close(err)
		return wire.ServerMessage{}, err
	case <-ctx.Done():
	}
	_ = cn.send(wire.ClientMessage{Type: wire.TypeCancel, ID: m.ID})
	grace := c.src.NewTimer(c.cfg.CancelGrace)
	defer grace.Stop()
	select {
	case r := <-cl.done:
		return r, nil
	case <-cn.lost:
		return wire.ServerMessage{}, ctx.Err()
	case <-grace.C():
		cn.forget(m.ID)
		return wire.ServerMessage{}, ctx.Err()
	}
}

// connect opens a session on the first URL that answers, restores the
// active domain and attaches the followed clocks again, then publishes the
// session. The caller holds the lane.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	var errs []error
	var cn *conn
	for _, u := range c.cfg.URLs {
		var err error
		if cn, err = c.dial(ctx, u); err == nil {
			break
		}
		errs = append(errs, err)
		if ctx.Err() != nil || c.ctx.Err() != nil {
			break
		}
	}
	if cn == nil {
		return nil, errors.Join(errs...)
	}
	c.mu.Lock()
	prevTx, lostTx := c.state.TxDomain, c.state.InTx
	active := c.state.Active
	c.state = wire.SessionState{}
	for _, f := range c.followed {
		f.conn, f.backoff, f.retryAt = nil, InitialBackoff, 0
	}
	reconnect := c.conn != nil || len(c.followed) > 0 || active != ""
	c.mu.Unlock()
	if lostTx {
		c.notify(Notice{Kind: TransactionLost, Domain: prevTx})
	}
	if reconnect {
		c.notify(Notice{Kind: Reconnected, Node: cn.node})
	}
	c.restore(cn, active)
	c.mu.Lock()
	c.conn = cn
	c.mu.Unlock()
	if err := cn.lostError(); err != nil {
		// Lost during restoration: the supervisor tries again.
		c.connLost(cn, err)
		return nil, err
	}
	return cn, nil
}

// restore attaches every followed clock whose restoration is due on cn,
// then makes active the session's active domain again. The caller holds the
// lane.
func (c *Client) restore(cn *conn, active string) {
	now := c.src.Monotonic()
	c.mu.Lock()
	var due []string
	for d, f := range c.followed {
		if f.conn != cn && (f.retryAt == 0 || f.retryAt <= now) {
			due = append(due, d)
		}
	}
	c.mu.Unlock()
	sort.Strings(due)
	for _, d := range due {
		if cn.lostError() != nil {
			return
		}
		c.restoreOne(cn, d)
	}
	if active == "" || cn.lostError() != nil {
		return
	}
	c.mu.Lock()
	current := c.state.Active
	c.mu.Unlock()
	if current != active {
		_, _ = c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: planner.Use{Name: active}.String()}, callPlain, c.cfg.RequestTimeout, nil)
	}
}

// restoreOne attaches domain's clock again on cn: USE it, then ATTACH.
func (c *Client) restoreOne(cn *conn, domain string) {
	use := planner.Use{Name: domain}.String()
	m, err := c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: use}, callPlain, c.cfg.RequestTimeout, nil)
	if err == nil && m.Type != wire.TypeError {
		m, err = c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: planner.Attach{}.String()}, callAttach, c.cfg.RequestTimeout, nil)
	}
	if err != nil {
		return // the session ended; the next one tries again
	}
	if m.Type != wire.TypeError {
		c.notify(Notice{Kind: Restored, Domain: domain, Node: cn.node})
		return
	}
	refusal := follow.DecodeError(m.Error)
	if le := lifecycle.AsError(refusal); le != nil && le.Code == lifecycle.CodeDomainNotFound {
		c.mu.Lock()
		f := c.followed[domain]
		delete(c.followed, domain)
		c.mu.Unlock()
		if f != nil {
			c.follow.Apply(wire.Frame{Domain: domain, Attachment: f.attachment, Kind: wire.FrameEnd, Reason: wire.DomainRemoved})
		}
		return
	}
	c.mu.Lock()
	f := c.followed[domain]
	var wait time.Duration
	if f != nil {
		wait = f.backoff
		f.retryAt = c.src.Monotonic() + wait
		f.backoff = min(2*f.backoff, MaxBackoff)
	}
	c.mu.Unlock()
	if f != nil {
		c.notify(Notice{Kind: RestoreRefused, Domain: domain, Node: cn.node, Err: errors.New(refusal.Msg), Retry: wait})
		c.wakeSupervisor()
	}
}

func (c *Client) notify(n Notice) {
	if c.cfg.Notify != nil {
		c.cfg.Notify(n)
	}
	c.logger.Debug("client notice", "notice", n.String())
}

func (c *Client) wakeSupervisor() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// stateArrived records the session state a reply reports.
func (c *Client) stateArrived(cn *conn, st wire.SessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == cn || c.conn == nil {
		c.state = st
	}
}

// attached records an attach reply before its frames can arrive: it is
// called on the stream's reader, ahead of the next message.
func (c *Client) attached(cn *conn, r *wire.EncodedResult) {
	res, err := wire.DecodeResult(r)
	if err != nil || res.Clock == nil {
		return
	}
	c.mu.Lock()
	f := c.followed[res.Domain]
	// An attach of a clock followed but not held by cn is a restoration.
	restored := f != nil && f.conn != cn
	if f == nil {
		f = &followedClock{}
		c.followed[res.Domain] = f
	}
	f.conn, f.attachment, f.retryAt, f.backoff = cn, res.Attachment, 0, InitialBackoff
	c.mu.Unlock()
	if !restored {
		c.follow.Attached(res.Domain, res.Attachment, *res.Clock)
		return
	}
	// A restoration reports the clock it carries as a state: the
	// attachment was interrupted.
	c.follow.Reattached(res.Domain, res.Attachment, *res.Clock)
}

// detached drops a followed clock once its detach is answered; no frame of
// it is delivered after.
func (c *Client) detached(cn *conn, domain string) {
	c.mu.Lock()
	delete(c.followed, domain)
	c.mu.Unlock()
	c.follow.Released(domain)
}

// frameArrived folds a frame of a followed attachment of the current
// session into the follow and drops any other.
func (c *Client) frameArrived(cn *conn, fr wire.Frame) {
	c.mu.Lock()
	f := c.followed[fr.Domain]
	if f == nil || f.conn != cn || f.attachment != fr.Attachment {
		c.mu.Unlock()
		return
	}
	// A node shutting down ends its session next: its end interrupts the
	// followed clock, which is attached again on the next session.
	interrupted := fr.Kind == wire.FrameEnd && fr.Reason == wire.NodeShutdown
	if fr.Kind == wire.FrameEnd && !interrupted {
		delete(c.followed, fr.Domain)
	}
	c.mu.Unlock()
	if interrupted {
		c.follow.Interrupted(fr)
		return
	}
	c.follow.Apply(fr)
}

// connLost reports the end of cn: the followed clocks are interrupted and
// the supervisor opens the next session.
func (c *Client) connLost(cn *conn, err error) {
	c.mu.Lock()
	if c.conn != cn {
		c.mu.Unlock()
		return
	}
	c.conn = nil
	n := len(c.followed)
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	if n > 0 {
		c.notify(Notice{Kind: Interrupted, Err: err})
	}
	c.wakeSupervisor()
}

// supervise reconnects while clocks are followed and retries refused
// restorations when they are due, until Close.
func (c *Client) supervise() {
	reconnectWait := InitialBackoff
	for {
		wait, ok := c.supervisorStep(&reconnectWait)
		if ok {
			t := c.src.NewTimer(wait)
			select {
			case <-t.C():
			case <-c.kick:
			case <-c.ctx.Done():
				t.Stop()
				return
			}
			t.Stop()
			continue
		}
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
	}
}

// supervisorStep does what is due now and returns how long to wait before
// the next step (ok false: until kicked).
func (c *Client) supervisorStep(reconnectWait *time.Duration) (time.Duration, bool) {
	if err := c.acquire(c.ctx); err != nil {
		return 0, false
	}
	defer c.release()
	c.mu.Lock()
	cn := c.conn
	n := len(c.followed)
	active := c.state.Active
	c.mu.Unlock()
	if n == 0 {
		return 0, false
	}
	if cn == nil {
		if _, err := c.connect(c.ctx); err != nil {
			wait := *reconnectWait
			*reconnectWait = min(2**reconnectWait, MaxBackoff)
			c.logger.Debug("reconnect failed", "err", err, "retry", wait)
			return wait, true
		}
		*reconnectWait = InitialBackoff
		c.mu.Lock()
		cn = c.conn
		c.mu.Unlock()
		if cn == nil {
			return 0, false
		}
	} else {
		c.restore(cn, active)
	}
	// The earliest due restoration on this session.
	now := c.src.Monotonic()
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Duration
	found := false
	for _, f := range c.followed {
		if f.conn != cn && f.retryAt > 0 {
			w := max(f.retryAt-now, 0)
			if !found || w < next {
				next, found = w, true
			}
		}
	}
	return next, found
}
