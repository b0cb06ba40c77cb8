package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"time"

	"golang.org/x/net/http2"
)

// ServerOptions choose who a server config admits.
type ServerOptions struct {
	// Roles are the identities a presented client certificate may carry;
	// empty admits nodes and clients.
	Roles []Role
	// AllowNoClientCert admits a connection that presents no certificate
	// (a bearer-token client the application authenticates itself). A
	// certificate that is presented is still verified against the CA and
	// must carry an admitted identity.
	AllowNoClientCert bool
}

// ServerConfig returns a TLS 1.3 server config that presents m's
// certificate and requires (or, with AllowNoClientCert, verifies when
// presented) a client certificate signed by the CA carrying an identity of
// an admitted role. The identity check runs in VerifyConnection, so it also
// holds for resumed sessions. The config advertises h2 and http/1.1.
func (m *Material) ServerConfig(o ServerOptions) *tls.Config {
	roles := o.Roles
	if len(roles) == 0 {
		roles = []Role{RoleNode, RoleClient}
	}
	auth := tls.RequireAndVerifyClientCert
	if o.AllowNoClientCert {
		auth = tls.VerifyClientCertIfGiven
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{m.Certificate},
		ClientCAs:    m.Pool,
		ClientAuth:   auth,
		NextProtos:   []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 && o.AllowNoClientCert {
				return nil
			}
			id, err := PeerIdentity(cs)
			if err != nil {
				return err
			}
			if !slices.Contains(roles, id.Role) {
				return fmt.Errorf("%w: %s is not admitted here", ErrNoIdentity, id)
			}
			return nil
		},
	}
}

// PeerServerConfig is ServerConfig admitting only cluster nodes: the config
// of the node-to-node listeners (raft).
func (m *Material) PeerServerConfig() *tls.Config {
	return m.ServerConfig(ServerOptions{Roles: []Role{RoleNode}})
}

// ClientConfig returns a TLS 1.3 client config that trusts the CA, presents
// m's certificate when m has one, and requires the server to present a node
// certificate; when node is not empty, of exactly that node. serverName is
// the name checked against the server's DNS and IP SANs; empty means the
// host of the dialled address (crypto/tls and net/http fill it in).
func (m *Material) ClientConfig(serverName, node string) *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    m.Pool,
		ServerName: serverName,
		NextProtos: []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			id, err := PeerIdentity(cs)
			if err != nil {
				return err
			}
			if id.Role != RoleNode || node != "" && id.Name != node {
				want := "a node"
				if node != "" {
					want = Identity{Role: RoleNode, Name: node}.String()
				}
				return fmt.Errorf("%w: the server is %s, expected %s", ErrNoIdentity, id, want)
			}
			return nil
		},
	}
	if len(m.Certificate.Certificate) > 0 {
		cfg.Certificates = []tls.Certificate{m.Certificate}
	}
	return cfg
}

// Transport returns an HTTP/2-only client transport over
// ClientConfig("", "") with bounded dial, handshake and idle timeouts. It
// is x/net's http2.Transport rather than net/http's, whose retry of a
// request on a connection that became unusable rewinds the body the
// abandoned attempt may still be writing (golang/go#41234); this one
// retries with a fresh body from the request's GetBody.
func (m *Material) Transport() *http2.Transport {
	return m.TransportDial(nil)
}

// TransportDial is Transport whose TCP connections dial opens in place of
// a net.Dialer (tests route them through a fault layer); nil is Transport.
func (m *Material) TransportDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http2.Transport {
	return &http2.Transport{
		TLSClientConfig: m.ClientConfig("", ""),
		DialTLSContext: func(ctx context.Context, network, addr string, cfg *tls.Config) (net.Conn, error) {
			return dialTLS(ctx, network, addr, cfg, dial)
		},
		IdleConnTimeout: 90 * time.Second,
		ReadIdleTimeout: 15 * time.Second,
		PingTimeout:     5 * time.Second,
	}
}

// Bounds of one peer connection's set-up.
const (
	dialTimeout      = 2 * time.Second
	handshakeTimeout = 2 * time.Second
)

// dialTLS dials addr and completes the TLS handshake, each within its own
// bound, and insists on h2.
func dialTLS(ctx context.Context, network, addr string, cfg *tls.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 15 * time.Second}).DialContext
	}
	dctx, dcancel := context.WithTimeout(ctx, dialTimeout)
	raw, err := dial(dctx, network, addr)
	dcancel()
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != http2.NextProtoTLS {
		_ = conn.Close()
		return nil, fmt.Errorf("pki: %s negotiated %q, not h2", addr, p)
	}
	return conn, nil
}

// PeerIdentity returns the nspl identity of the verified peer certificate
// of a connection: the leaf of its first verified chain, never an
// unverified certificate. It fails with ErrNoIdentity when the peer was not
// verified or its certificate names no identity.
func PeerIdentity(cs tls.ConnectionState) (Identity, error) {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return Identity{}, fmt.Errorf("%w: the peer presented no certificate verified by the cluster CA", ErrNoIdentity)
	}
	return identityOf(cs.VerifiedChains[0][0])
}

// PeerName returns the node name of a connection's verified peer
// certificate (URI SAN nspl-node://<name>). A client certificate or an
// unverified peer fails with ErrNoIdentity.
func PeerName(cs tls.ConnectionState) (string, error) {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", fmt.Errorf("%w: the peer presented no certificate verified by the cluster CA", ErrNoIdentity)
	}
	name, ok := identityFromURIs(cs.VerifiedChains[0][0].URIs, RoleNode)
	if !ok {
		return "", fmt.Errorf("%w: the peer certificate has no %s:// URI SAN; only cluster nodes may call this", ErrNoIdentity, NodeScheme)
	}
	return name, nil
}

// LoadCAPool reads a PEM CA file into a pool, for a client that
// authenticates with a bearer token instead of a certificate
// (&Material{Pool: pool}).ClientConfig then presents no certificate.
func LoadCAPool(caFile string) (*x509.CertPool, error) {
	b, err := readBounded(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%w: %q holds no PEM certificate", ErrMaterial, caFile)
	}
	return pool, nil
}
