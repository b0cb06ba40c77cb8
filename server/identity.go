package server

import (
	"net/http"

	"github.com/nspl-dev/nspl/pki"
)

// Identities of callers that present no certificate.
const (
	// TokenIdentity is every caller admitted by the bearer token: the
	// server knows one token, so its holders share one identity.
	TokenIdentity = "bearer-token"
	// AnonymousIdentity is every caller of an insecure server without a
	// token (loopback only).
	AnonymousIdentity = "anonymous"
)

// Identity returns the identity of an authenticated request, the key of the
// per-identity session share: the verified certificate's identity
// (nspl-client://NAME, or nspl-node://NAME), TokenIdentity for a caller
// admitted by the bearer token, or AnonymousIdentity on an insecure server
// without one. It does not authenticate: call it only behind the server's
// authentication. A verified certificate that names no identity is keyed
// by its subject.
func (s *Server) Identity(r *http.Request) string {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		if id, err := pki.PeerIdentity(*r.TLS); err == nil {
			return id.String()
		}
		return "certificate " + r.TLS.VerifiedChains[0][0].Subject.String()
	}
	if s.cfg.Token != "" {
		return TokenIdentity
	}
	return AnonymousIdentity
}
