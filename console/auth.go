package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/internal/guesslimit"
)

// Errors the console's routes answer with.
var (
	// ErrArchiveNotServed: BACKUP, RESTORE and DESCRIBE BACKUP name files,
	// and the console names none on the server.
	ErrArchiveNotServed = errors.New("the console reads and writes no archive file; run BACKUP, RESTORE and DESCRIBE BACKUP from the nspl shell, which keeps the file on your machine")
)

// noArchives refuses every archive: a browser's statement never names a
// file on the server.
type noArchives struct{}

func (noArchives) WriteArchive(context.Context, string, backup.Archive) (string, int64, error) {
	return "", 0, ErrArchiveNotServed
}

func (noArchives) ReadArchive(context.Context, string) (string, backup.Archive, error) {
	return "", backup.Archive{}, ErrArchiveNotServed
}

// principal is an authenticated console caller.
type principal struct {
	// identity is the caller as the listener's limits key it: a client
	// certificate's nspl-client://NAME, the token identity or the
	// anonymous one.
	identity string
	// login is what the caller's CSRF token and statement-box sessions
	// are bound to: the login id of a cookie, or the certificate's
	// identity.
	login string
	// expires is the login's end in Unix nanoseconds; 0 for callers
	// admitted by certificate or an open listener.
	expires int64
	// cookie reports a caller admitted by its login cookie, who may log
	// out.
	cookie bool
}

// signedIn says in plain words how the caller is signed in, for the
// page's header.
func (p principal) signedIn() string {
	switch {
	case p.cookie:
		return "Signed in with the node's token"
	case strings.HasPrefix(p.login, "certificate "):
		name := p.identity
		if _, after, ok := strings.Cut(name, "://"); ok {
			name = after
		}
		return "Signed in as " + name + " (client certificate)"
	default:
		return "Open console: no sign-in on this loopback listener"
	}
}

// csrf returns the caller's CSRF token: a MAC of its login, so it needs no
// storage and is the same on every page of one login.
func (c *Console) csrf(p principal) string {
	return base64.RawURLEncoding.EncodeToString(c.mac("csrf", p.login))
}

// cookieName is the login cookie's name: with the __Host- prefix over TLS,
// which binds it to this origin, Secure and path /.
func (c *Console) cookieName() string {
	if c.cfg.Secure {
		return "__Host-nspl_console"
	}
	return "nspl_console"
}

// loginCookie returns a signed cookie value for a new login: 16 random
// bytes of login id, the expiry, and their MAC.
func (c *Console) loginCookie() (value, id string, expires int64) {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	id = base64.RawURLEncoding.EncodeToString(raw[:])
	expires = c.now() + int64(c.cfg.LoginLifetime)
	var exp [8]byte
	binary.BigEndian.PutUint64(exp[:], uint64(expires))
	msg := append(raw[:], exp[:]...)
	sig := c.mac("login", string(msg))
	return base64.RawURLEncoding.EncodeToString(append(msg, sig...)), id, expires
}

// parseLoginCookie returns the login id and expiry of a cookie value the
// console signed, refusing a forged, expired or logged-out one.
func (c *Console) parseLoginCookie(value string) (id string, expires int64, ok bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(value)
	if err != nil || len(b) != 16+8+32 {
		return "", 0, false
	}
	msg, sig := b[:24], b[24:]
	if !hmac.Equal(sig, c.mac("login", string(msg))) {
		return "", 0, false
	}
	expires = int64(binary.BigEndian.Uint64(msg[16:24]))
	if c.now() >= expires {
		return "", 0, false
	}
	id = base64.RawURLEncoding.EncodeToString(msg[:16])
	c.mu.Lock()
	out := c.logouts.refused(id, expires-int64(c.cfg.LoginLifetime))
	c.mu.Unlock()
	return id, expires, !out
}

// authenticate returns the caller of r: a verified client certificate
// first, then the login cookie, then an open listener's anonymous caller.
// A node certificate is refused with errNodeCertificate.
func (c *Console) authenticate(r *http.Request) (principal, error) {
	id, ok, err := c.cfg.Certificate(r)
	if err != nil {
		return principal{}, errNodeCertificate
	}
	if ok {
		return principal{identity: id, login: "certificate " + id}, nil
	}
	if ck, err := r.Cookie(c.cookieName()); err == nil && c.cfg.Token != "" {
		if lid, exp, ok := c.parseLoginCookie(ck.Value); ok {
			return principal{identity: c.cfg.TokenIdentity, login: "login " + lid, expires: exp, cookie: true}, nil
		}
	}
	if c.cfg.Open {
		return principal{identity: c.cfg.AnonymousIdentity, login: "anonymous"}, nil
	}
	return principal{}, errLoginRequired
}

var (
	errNodeCertificate = errors.New("a node certificate is not a client identity: present a client certificate (nspl cert client NAME) or log in with the bearer token")
	errLoginRequired   = errors.New("log in with the node's bearer token, or present a client certificate signed by the cluster CA")
	errCSRF            = errors.New("this request did not carry the page's CSRF token or came from another site; reload the console and try again")
)

type principalKey struct{}

// authorized admits the callers authenticate finds; state-changing routes
// (mutates) also need the caller's CSRF token in the X-CSRF-Token header or
// the csrf form field, and a same-origin request.
func (c *Console) authorized(h http.HandlerFunc, mutates bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := c.authenticate(r)
		if err != nil {
			if errors.Is(err, errNodeCertificate) {
				http.Error(w, err.Error(), http.StatusForbidden)
				return
			}
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, Prefix+"api/") {
				http.Redirect(w, r, loginURL(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if mutates {
			got := r.Header.Get("X-CSRF-Token")
			if got == "" {
				r.Body = http.MaxBytesReader(w, r.Body, MaxStatementBytes+1024)
				got = r.PostFormValue("csrf")
			}
			if !sameOrigin(r) || subtle.ConstantTimeCompare([]byte(got), []byte(c.csrf(p))) != 1 {
				http.Error(w, errCSRF.Error(), http.StatusForbidden)
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

// caller returns the principal authorized put on r.
func caller(r *http.Request) principal {
	p, _ := r.Context().Value(principalKey{}).(principal)
	return p
}

// sameOrigin reports whether a browser request came from a page of this
// origin: its Sec-Fetch-Site says same-origin (or a navigation the user
// typed), or, from a browser that sends no such header, its Origin names
// this host. A request with neither comes from no browser page (curl, a Go
// client), which cross-site forgery cannot send.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}

// serveLogin checks the posted token and sets the login cookie.
func (c *Console) serveLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if !sameOrigin(r) {
		http.Error(w, errCSRF.Error(), http.StatusForbidden)
		return
	}
	if c.cfg.Token == "" {
		c.renderLogin(w, r, http.StatusBadRequest, "this node has no bearer token: present a client certificate instead")
		return
	}
	// The body is read before the guess is checked and counted, in one
	// step, by the listener's limiter.
	token := strings.TrimSpace(r.PostFormValue("token"))
	switch v := c.cfg.Guesses.Try(r.RemoteAddr, token); v.Outcome {
	case guesslimit.Refused:
		w.Header().Set("Retry-After", strconv.FormatInt(v.RetryAfterSeconds(), 10))
		c.renderLogin(w, r, http.StatusTooManyRequests, v.Message())
		return
	case guesslimit.Wrong:
		c.renderLogin(w, r, http.StatusUnauthorized, "that is not this node's bearer token")
		return
	}
	value, _, expires := c.loginCookie()
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(), Value: value, Path: "/", HttpOnly: true, Secure: c.cfg.Secure,
		SameSite: http.SameSiteStrictMode, Expires: time.Unix(0, expires).UTC()})
	http.Redirect(w, r, loginTarget(r.PostFormValue("next")), http.StatusSeeOther)
}

// consolePages are the paths of the console's pages, the only places a
// login sends a browser back to.
var consolePages = map[string]bool{Prefix: true, Prefix + "cluster": true}

// maxLoginTarget bounds the page a login returns to.
const maxLoginTarget = 2048

// loginTarget returns the page a login sends the browser to: next when it
// is one of the console's own pages on this origin (a path of
// consolePages, with its query), the domains page otherwise. Anything
// else is refused, so that a link to the login form cannot send a browser
// that logs in to another site (an open redirect) or to an API route: a
// scheme or host ("https://evil.example/console/", "//evil.example/"), a
// backslash or control character some browsers read as a slash, a path
// that only cleans to a page ("/console/../console/"), userinfo. The query
// is passed through re-encoded, the fragment dropped.
func loginTarget(next string) string {
	if next == "" || len(next) > maxLoginTarget || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return Prefix
	}
	for _, r := range next {
		if r == '\\' || r < 0x20 || r == 0x7f {
			return Prefix
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !consolePages[u.Path] || u.RawPath != "" {
		return Prefix
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || len(q) == 0 {
		return u.Path
	}
	return u.Path + "?" + q.Encode()
}

// loginURL is the login form that returns to page (a request URI) once
// logged in; the domains page needs no return.
func loginURL(page string) string {
	if t := loginTarget(page); t != Prefix {
		return Prefix + "login?next=" + url.QueryEscape(t)
	}
	return Prefix + "login"
}

// serveLogout ends the caller's login: its id is refused from now until
// it would have expired (kept in Config.LogoutFile when set), and the
// browser is told to forget the cookie. The caller's statement-box
// sessions end with it. When the logout cannot be kept in its file the
// login is still refused until the node restarts, and the reply says so.
func (c *Console) serveLogout(w http.ResponseWriter, r *http.Request) {
	p := caller(r)
	var err error
	if p.cookie {
		c.mu.Lock()
		err = c.logouts.add(strings.TrimPrefix(p.login, "login "), p.expires, c.now())
		c.mu.Unlock()
	}
	c.endRepls(p.login)
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: c.cfg.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	if err != nil {
		c.logger.Error("console: a logout could not be kept; it holds until the node restarts", "identity", p.identity, "err", err)
		http.Error(w, "logged out, but the node could not keep the logout and forgets it when it restarts: "+err.Error(),
			http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
