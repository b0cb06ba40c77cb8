package server

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/internal/guesslimit"
)

// Defaults of Limits, the bounds nspl serve documents for its flags.
const (
	// DefaultHandshakeTimeout bounds a connection's TLS handshake and the
	// headers of each HTTP/1.1 request.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a connection that carries no request for
	// this long, from the end of its TLS handshake on.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultSessionIdleTimeout closes a session whose client sends no
	// message for this long.
	DefaultSessionIdleTimeout = 10 * time.Minute
	// DefaultMessageTimeout bounds the arrival of one client message, from
	// its first byte to its newline.
	DefaultMessageTimeout = 30 * time.Second
	// DefaultMaxSessionsPerIdentity bounds the sessions one identity holds.
	DefaultMaxSessionsPerIdentity = 64
	// DefaultTokenGuessesPerAddress bounds the wrong bearer tokens one
	// address prefix (IPv4 /32, IPv6 /64) may send in TokenGuessWindow.
	DefaultTokenGuessesPerAddress = guesslimit.DefaultPerAddress
	// DefaultTokenGuesses bounds the wrong bearer tokens all addresses
	// that never presented the right one may send together in
	// TokenGuessWindow.
	DefaultTokenGuesses = guesslimit.DefaultGlobal
	// DefaultUploadTimeout bounds how long an uploaded archive waits for
	// the statement that claims it, from its first piece.
	DefaultUploadTimeout = 5 * time.Minute
	// TokenGuessWindow is the period the token's guess limits count over.
	TokenGuessWindow = guesslimit.DefaultWindow
)

// Limits bounds what a client may hold on the listener and how long it may
// take. A zero field takes its default; a negative one is ErrConfig.
type Limits struct {
	// HandshakeTimeout bounds the TLS handshake of a connection and the
	// headers of each HTTP/1.1 request on it: net/http derives the
	// handshake deadline from the header-read timeout, so they are one
	// bound. (HTTP/2's connection preface has net/http's own 10 s bound.)
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection with no open request, such as one
	// that completed TLS and the HTTP/2 preface and sent nothing more.
	IdleTimeout time.Duration
	// SessionIdleTimeout closes a session whose client sent no message
	// (a ping counts) for this long, with a session_idle error.
	SessionIdleTimeout time.Duration
	// MessageTimeout closes a session whose client started a message and
	// did not finish it within this long, with a message_timeout error.
	MessageTimeout time.Duration
	// MaxSessionsPerIdentity bounds the concurrent sessions of one
	// identity (Server.Identity), so one certificate or token cannot take
	// the whole of Config.MaxSessions.
	MaxSessionsPerIdentity int
	// TokenGuessesPerAddress bounds the wrong bearer tokens one address
	// prefix may send within TokenGuessWindow, over every route that takes
	// the token (sessions, /metrics, leave, remove, the console's login);
	// past it the prefix's token requests, the right token's too, are
	// answered 429 until the window ends.
	TokenGuessesPerAddress int
	// TokenGuesses bounds the wrong bearer tokens of all address prefixes
	// together within TokenGuessWindow; past it a prefix that has not
	// presented the right token within a day is answered 429.
	TokenGuesses int
	// UploadTimeout bounds an archive upload (RESTORE, DESCRIBE BACKUP)
	// from its first piece to the statement that claims it: past it the
	// upload is dropped and its slot freed, and the statement, should it
	// still come, gets archive_timeout.
	UploadTimeout time.Duration
	// ResumeTimeout is how long the open transaction of a session whose
	// connection was lost (not closed by its client) is held for the
	// client to reconnect with the session's resume token and take it up;
	// past it the transaction is reverted. Each identity holds at most
	// MaxSessionsPerIdentity such transactions, and past that its oldest is
	// reverted.
	ResumeTimeout time.Duration
}

// withDefaults fills zero fields and refuses negative ones.
func (l Limits) withDefaults() (Limits, error) {
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"handshake timeout", &l.HandshakeTimeout, DefaultHandshakeTimeout},
		{"idle timeout", &l.IdleTimeout, DefaultIdleTimeout},
		{"session idle timeout", &l.SessionIdleTimeout, DefaultSessionIdleTimeout},
		{"message timeout", &l.MessageTimeout, DefaultMessageTimeout},
		{"upload timeout", &l.UploadTimeout, DefaultUploadTimeout},
		{"resume timeout", &l.ResumeTimeout, DefaultResumeTimeout},
	} {
		if *d.v < 0 {
			return l, fmt.Errorf("%w: the %s %s is negative; give a positive duration or zero for the default %s", ErrConfig, d.name, *d.v, d.def)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if l.MaxSessionsPerIdentity < 0 {
		return l, fmt.Errorf("%w: the per-identity session cap %d is negative; give a positive number or zero for the default %d", ErrConfig, l.MaxSessionsPerIdentity, DefaultMaxSessionsPerIdentity)
	}
	if l.MaxSessionsPerIdentity == 0 {
		l.MaxSessionsPerIdentity = DefaultMaxSessionsPerIdentity
	}
	for _, n := range []struct {
		name string
		v    *int
		def  int
	}{
		{"per-address token guess limit", &l.TokenGuessesPerAddress, DefaultTokenGuessesPerAddress},
		{"token guess ceiling", &l.TokenGuesses, DefaultTokenGuesses},
	} {
		if *n.v < 0 {
			return l, fmt.Errorf("%w: the %s %d is negative; give a positive number or zero for the default %d", ErrConfig, n.name, *n.v, n.def)
		}
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	return l, nil
}

// Reasons a session is refused at admission, the reason labels of
// nspl_session_refusals_total.
const (
	refuseCapacity = "capacity" // Config.MaxSessions reached
	refuseIdentity = "identity" // Limits.MaxSessionsPerIdentity reached
)

// admission counts the open sessions of each identity. It is bounded by
// the session cap: an identity is kept only while it holds a session.
type admission struct {
	mu         sync.Mutex
	byIdentity map[string]int

	refusedCapacity atomic.Uint64
	refusedIdentity atomic.Uint64
}

// admit takes one of identity's share, or reports false when identity
// already holds max sessions.
func (a *admission) admit(identity string, max int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byIdentity[identity] >= max {
		return false
	}
	if a.byIdentity == nil {
		a.byIdentity = make(map[string]int)
	}
	a.byIdentity[identity]++
	return true
}

// release returns one of identity's share.
func (a *admission) release(identity string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byIdentity[identity] <= 1 {
		delete(a.byIdentity, identity)
		return
	}
	a.byIdentity[identity]--
}

// admitSession admits a session of r's identity within the session cap and
// the identity's share, or answers the refusal and returns false. The
// caller calls the returned release once the session ends.
func (s *Server) admitSession(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	return s.admit(w, s.Identity(r))
}

// admit admits one session of identity id under the server's total and
// id's share, or writes the refusal.
func (s *Server) admit(w http.ResponseWriter, id string) (release func(), ok bool) {
	if n := s.sessions.Add(1); n > int64(s.cfg.MaxSessions) {
		s.sessions.Add(-1)
		s.admission.refusedCapacity.Add(1)
		http.Error(w, fmt.Sprintf("this node serves at most %d sessions; try another node or later", s.cfg.MaxSessions), http.StatusServiceUnavailable)
		return nil, false
	}
	if !s.admission.admit(id, s.cfg.Limits.MaxSessionsPerIdentity) {
		s.sessions.Add(-1)
		s.admission.refusedIdentity.Add(1)
		http.Error(w, fmt.Sprintf("%s already holds %d sessions, this node's share per identity; close one or try later", id, s.cfg.Limits.MaxSessionsPerIdentity), http.StatusTooManyRequests)
		return nil, false
	}
	return func() {
		s.admission.release(id)
		s.sessions.Add(-1)
	}, true
}

// sessionCloses counts the sessions the server closed for breaking a bound
// or the protocol, by the code of the error it sent.
type sessionCloses struct {
	protocol, tooLarge, order, idle, message atomic.Uint64
}

// count notes a session closed for err.
func (c *sessionCloses) count(err error) {
	switch {
	case errors.Is(err, ErrSessionIdle):
		c.idle.Add(1)
	case errors.Is(err, ErrMessageTimeout):
		c.message.Add(1)
	case errors.Is(err, ErrMessageTooLarge):
		c.tooLarge.Add(1)
	case errors.Is(err, ErrRequestOrder):
		c.order.Add(1)
	default:
		c.protocol.Add(1)
	}
}
