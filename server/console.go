package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"net/http"

	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/pki"
)

// mountConsole serves the web console under console.Prefix: its sessions
// are admitted like protocol sessions (the server's total and each
// identity's share), end when the server drains or closes, and
// authenticate with the server's own credentials: a client certificate, or
// a login with the bearer token.
func (s *Server) mountConsole() error {
	c, err := console.New(console.Config{
		Engine:            s.cfg.Node,
		Node:              s.cfg.Node.Name(),
		Session:           s.cfg.Session,
		Host:              consoleHost{s},
		Token:             s.cfg.Token,
		Guesses:           s.guesses,
		Key:               s.consoleKey(),
		Certificate:       clientCertificate,
		Open:              s.cfg.Insecure && s.cfg.Token == "",
		Secure:            !s.cfg.Insecure,
		TokenIdentity:     TokenIdentity,
		AnonymousIdentity: AnonymousIdentity,
		LogoutFile:        s.cfg.ConsoleLogoutFile,
		TimeSource:        s.cfg.TimeSource,
		Logger:            s.logger,
		Metrics:           s.cfg.Node.MetricsRegistry(),
	})
	if err != nil {
		return err
	}
	s.console.Store(c)
	s.mux.Handle(console.Prefix, c)
	return nil
}

// consoleKey is the key the console signs logins and CSRF tokens with:
// derived from the node's TLS key and the bearer token, so it survives a
// restart of the node (a logged-in browser stays logged in) and a new
// token ends every login of the old one. Without TLS material (an
// insecure loopback server) it is random, and logins end with the process.
func (s *Server) consoleKey() []byte {
	if s.cfg.TLS != nil && len(s.cfg.TLS.Certificates) > 0 && s.cfg.TLS.Certificates[0].PrivateKey != nil {
		if der, err := x509.MarshalPKCS8PrivateKey(s.cfg.TLS.Certificates[0].PrivateKey); err == nil {
			m := hmac.New(sha256.New, der)
			m.Write([]byte("nspl console login key v1\x00"))
			m.Write([]byte(s.cfg.Token))
			return m.Sum(nil)
		}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return key
}

// errNotClient: a verified certificate that names no client.
var errNotClient = errors.New("a node certificate is not a client identity")

// clientCertificate returns the identity of a verified client certificate;
// a verified certificate of another role (a node's) is an error.
func clientCertificate(r *http.Request) (string, bool, error) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return "", false, nil
	}
	id, err := pki.PeerIdentity(*r.TLS)
	if err != nil || id.Role != pki.RoleClient {
		return "", false, errNotClient
	}
	return id.String(), true, nil
}

// consoleHost admits console sessions as the server admits protocol
// sessions.
type consoleHost struct{ s *Server }

func (h consoleHost) Begin(w http.ResponseWriter, r *http.Request, identity string) (context.Context, func(), bool) {
	s := h.s
	release, ok := s.admit(w, identity)
	if !ok {
		return nil, nil, false
	}
	if !s.enter(w) {
		release()
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(r.Context())
	stopOnClose := context.AfterFunc(s.ctx, cancel)
	stopOnDrain := afterClose(s.draining, cancel)
	return ctx, func() {
		stopOnDrain()
		stopOnClose()
		cancel()
		release()
		s.wg.Done()
	}, true
}

// afterClose calls f once ch is closed, unless the returned stop is called
// first; stop waits for the watcher to end.
func afterClose(ch <-chan struct{}, f func()) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() { // owned: ends at stop or once ch closes
		defer close(done)
		select {
		case <-ch:
			f()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
