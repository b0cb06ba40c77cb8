package server

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/guesslimit"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

// verifiedAs returns a connection state whose verified chain is m's leaf.
func verifiedAs(t *testing.T, m *pki.Material) *tls.ConnectionState {
	t.Helper()
	leaf, err := x509.ParseCertificate(m.Certificate.Certificate[0])
	require.NoError(t, err)
	return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf}}}
}

func TestAuthenticatedAdmitsClientsOnly(t *testing.T) {
	ca := testpki.New(t)
	nodeCert, clientCert := ca.Node("n1", "127.0.0.1"), ca.Client("alice")

	s := &Server{cfg: Config{Token: "s3cret"}, guesses: guesslimit.New("s3cret", guesslimit.Config{})}
	h := s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		name   string
		tls    *tls.ConnectionState
		header string
		want   int
	}{
		{"client certificate", verifiedAs(t, clientCert), "", http.StatusTeapot},
		{"node certificate", verifiedAs(t, nodeCert), "", http.StatusForbidden},
		{"node certificate with a valid token", verifiedAs(t, nodeCert), "Bearer s3cret", http.StatusForbidden},
		{"token", nil, "Bearer s3cret", http.StatusTeapot},
		{"token, lower-case scheme", nil, "bearer s3cret", http.StatusTeapot},
		{"token, upper-case scheme and two spaces", nil, "BEARER  s3cret", http.StatusTeapot},
		{"wrong token", nil, "Bearer s3cre", http.StatusUnauthorized},
		{"token with a suffix", nil, "Bearer s3cret ", http.StatusUnauthorized},
		{"other scheme", nil, "Basic s3cret", http.StatusUnauthorized},
		{"scheme alone", nil, "Bearer", http.StatusUnauthorized},
		{"scheme and space", nil, "Bearer ", http.StatusUnauthorized},
		{"nothing", nil, "", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, wire.SessionPath, nil)
			r.TLS = tc.tls
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, tc.want, w.Code, w.Body.String())
		})
	}
}
