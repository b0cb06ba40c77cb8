package pki

import (
	"context"
	"crypto/tls"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var issueTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testCA(t testing.TB) *CA {
	t.Helper()
	ca, err := NewCA(Options{Now: issueTime})
	require.NoError(t, err)
	return ca
}

func testMaterial(t testing.TB, ca *CA, c *Certificate) *Material {
	t.Helper()
	m, err := ParseMaterial(ca.CertPEM, c.CertPEM, c.KeyPEM)
	require.NoError(t, err)
	return m
}

func nodeMaterial(t testing.TB, ca *CA, name string) *Material {
	t.Helper()
	c, err := ca.IssueNode(name, nil, Options{Now: issueTime})
	require.NoError(t, err)
	return testMaterial(t, ca, c)
}

func clientMaterial(t testing.TB, ca *CA, name string) *Material {
	t.Helper()
	c, err := ca.IssueClient(name, Options{Now: issueTime})
	require.NoError(t, err)
	return testMaterial(t, ca, c)
}

// at pins a config's notion of now inside the certificates' validity.
func at(cfg *tls.Config) *tls.Config {
	cfg.Time = func() time.Time { return issueTime.Add(time.Hour) }
	return cfg
}

func TestValidName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"n1", true},
		{"a", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"-a", false},
		{"a-", false},
		{"a-b", true},
		{"A9", true},
		{"a.b", false},
		{"a_b", false},
		{"a b", false},
		{"é", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidName(c.name)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalidName)
			}
		})
	}
}

func TestIssueNodeSANs(t *testing.T) {
	ca := testCA(t)
	cases := []struct {
		name, node string
		hosts      []string
		dns        []string
		ips        []string
		err        error
	}{
		{"defaults", "n1", nil, []string{"n1", "localhost"}, []string{"127.0.0.1", "::1"}, nil},
		{"given hosts", "n2", []string{"10.0.0.2", "db.example.com", "n2"}, []string{"n2", "db.example.com"}, []string{"10.0.0.2"}, nil},
		{"bad host", "n3", []string{"bad host"}, nil, nil, ErrInvalidHost},
		{"wildcard host", "n3", []string{"*.example.com"}, nil, nil, ErrInvalidHost},
		{"bad name", "n_3", nil, nil, nil, ErrInvalidName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cert, err := ca.IssueNode(c.node, c.hosts, Options{Now: issueTime})
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.dns, cert.Cert.DNSNames)
			var ips []string
			for _, ip := range cert.Cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			require.Equal(t, c.ips, ips)
			require.Len(t, cert.Cert.URIs, 1)
			require.Equal(t, "nspl-node://"+c.node, cert.Cert.URIs[0].String())
			require.Equal(t, issueTime.Add(-clockSkewAllowance), cert.Cert.NotBefore)
			require.Equal(t, issueTime.Add(DefaultValidity), cert.Cert.NotAfter)
		})
	}
}

func TestIssueRequiresTimeAndCapsValidity(t *testing.T) {
	ca := testCA(t)
	_, err := ca.IssueClient("c", Options{})
	require.ErrorIs(t, err, ErrMaterial)
	_, err = ca.IssueClient("c", Options{Now: issueTime, Validity: -time.Second})
	require.ErrorIs(t, err, ErrMaterial)
	c, err := ca.IssueClient("c", Options{Now: issueTime, Validity: 2 * DefaultCAValidity})
	require.NoError(t, err)
	require.Equal(t, ca.Cert.NotAfter, c.Cert.NotAfter, "a certificate never outlives its CA")
	require.Equal(t, "nspl-client://c", c.Cert.URIs[0].String())
	require.Empty(t, c.Cert.DNSNames)
}

func TestWriteAndLoad(t *testing.T) {
	dir := t.TempDir()
	ca := testCA(t)
	require.NoError(t, WriteCA(dir, ca))
	require.ErrorIs(t, WriteCA(dir, ca), ErrExists)

	loaded, err := LoadCA(dir)
	require.NoError(t, err)
	require.True(t, loaded.Cert.Equal(ca.Cert))

	n, err := loaded.IssueNode("n1", []string{"127.0.0.1"}, Options{Now: issueTime})
	require.NoError(t, err)
	require.NoError(t, WriteCertificate(NodeCertPath(dir, "n1"), NodeKeyPath(dir, "n1"), n))
	require.ErrorIs(t, WriteCertificate(NodeCertPath(dir, "n1"), NodeKeyPath(dir, "n1"), n), ErrExists)
	c, err := loaded.IssueClient("alice", Options{Now: issueTime})
	require.NoError(t, err)
	require.NoError(t, WriteCertificate(ClientCertPath(dir, "alice"), ClientKeyPath(dir, "alice"), c))

	for _, p := range []string{CAKeyPath(dir), NodeKeyPath(dir, "n1"), ClientKeyPath(dir, "alice")} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}

	m, err := LoadNode(dir, "n1")
	require.NoError(t, err)
	require.Equal(t, Identity{Role: RoleNode, Name: "n1"}, m.Identity)
	m, err = LoadClient(dir, "alice")
	require.NoError(t, err)
	require.Equal(t, Identity{Role: RoleClient, Name: "alice"}, m.Identity)

	_, err = LoadNode(dir, "n2")
	require.ErrorIs(t, err, ErrMaterial)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "make it with nspl cert node n2 --dir "+dir, "a missing certificate says how to make it")
	_, err = LoadClient(dir, "bob")
	require.ErrorContains(t, err, "make it with nspl cert client bob --dir "+dir)
	_, err = LoadNode(dir, "bad name")
	require.ErrorIs(t, err, ErrInvalidName)

	// A certificate from another CA does not load against this one.
	other := testCA(t)
	foreign, err := other.IssueNode("n3", nil, Options{Now: issueTime})
	require.NoError(t, err)
	require.NoError(t, WriteCertificate(NodeCertPath(dir, "n3"), NodeKeyPath(dir, "n3"), foreign))
	_, err = LoadNode(dir, "n3")
	require.ErrorIs(t, err, ErrMaterial)

	// A node file holding a client certificate is refused.
	require.NoError(t, WriteCertificate(NodeCertPath(dir, "bob"), NodeKeyPath(dir, "bob"), c))
	_, err = LoadNode(dir, "bob")
	require.ErrorIs(t, err, ErrMaterial)
}

func TestLoadRefusesOversizedAndWrongFiles(t *testing.T) {
	dir := t.TempDir()
	ca := testCA(t)
	require.NoError(t, WriteCA(dir, ca))
	big := make([]byte, maxPEMBytes+1)
	require.NoError(t, os.WriteFile(NodeCertPath(dir, "n1"), big, 0o644))
	require.NoError(t, os.WriteFile(NodeKeyPath(dir, "n1"), []byte("x"), 0o600))
	_, err := LoadNode(dir, "n1")
	require.ErrorIs(t, err, ErrMaterial)
	require.ErrorContains(t, err, "larger than")

	_, err = LoadCA(t.TempDir())
	require.ErrorIs(t, err, ErrMaterial)

	// A leaf in ca.crt is not a CA.
	dir2 := t.TempDir()
	n, err := ca.IssueNode("n1", nil, Options{Now: issueTime})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(CACertPath(dir2), n.CertPEM, 0o644))
	require.NoError(t, os.WriteFile(CAKeyPath(dir2), n.KeyPEM, 0o600))
	_, err = LoadCA(dir2)
	require.ErrorIs(t, err, ErrMaterial)
}

// handshake runs a TLS handshake over loopback TCP and returns both sides'
// views of the connection, or the first error of either side. The server
// writes one byte after its handshake and the client reads it, so TLS 1.3
// session tickets (sent before that byte) reach the client's cache.
func handshake(t *testing.T, server, client *tls.Config) (tls.ConnectionState, tls.ConnectionState, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	type result struct {
		cs  tls.ConnectionState
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		srv := tls.Server(c, server)
		if err := srv.Handshake(); err != nil {
			done <- result{err: err}
			return
		}
		_, err = srv.Write([]byte{1})
		done <- result{cs: srv.ConnectionState(), err: err}
		_, _ = io.Copy(io.Discard, srv)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	cli := tls.Client(c, client)
	cerr := cli.Handshake()
	if cerr == nil {
		_, cerr = io.ReadFull(cli, make([]byte, 1))
	}
	ccs := cli.ConnectionState()
	_ = c.Close()
	r := <-done
	if cerr != nil {
		return tls.ConnectionState{}, ccs, cerr
	}
	return r.cs, ccs, r.err
}

func TestHandshakeAdmission(t *testing.T) {
	defer goleak.VerifyNone(t)
	ca := testCA(t)
	n1 := nodeMaterial(t, ca, "n1")
	n2 := nodeMaterial(t, ca, "n2")
	alice := clientMaterial(t, ca, "alice")
	other := testCA(t)
	stranger := nodeMaterial(t, other, "n1")
	anon := &Material{Pool: n1.Pool}

	cases := []struct {
		name     string
		server   *tls.Config
		client   *tls.Config
		ok       bool
		peerName string
		peerRole Role
	}{
		{"node to node", n1.PeerServerConfig(), n2.ClientConfig("n1", ""), true, "n2", RoleNode},
		{"node to exact node", n1.PeerServerConfig(), n2.ClientConfig("n1", "n1"), true, "n2", RoleNode},
		{"node to the wrong node", n1.PeerServerConfig(), n2.ClientConfig("n1", "n9"), false, "", 0},
		{"client on a peer listener", n1.PeerServerConfig(), alice.ClientConfig("n1", ""), false, "", 0},
		{"client on the api listener", n1.ServerConfig(ServerOptions{}), alice.ClientConfig("n1", ""), true, "", RoleClient},
		{"no certificate refused", n1.ServerConfig(ServerOptions{}), anon.ClientConfig("n1", ""), false, "", 0},
		{"no certificate with a token", n1.ServerConfig(ServerOptions{AllowNoClientCert: true}), anon.ClientConfig("n1", ""), true, "", 0},
		{"foreign CA refused", n1.ServerConfig(ServerOptions{AllowNoClientCert: true}), stranger.ClientConfig("n1", ""), false, "", 0},
		{"server from a foreign CA", stranger.PeerServerConfig(), n2.ClientConfig("n1", ""), false, "", 0},
		{"server name not in SANs", n1.PeerServerConfig(), n2.ClientConfig("n7", ""), false, "", 0},
		{"server by IP SAN", n1.PeerServerConfig(), n2.ClientConfig("127.0.0.1", ""), true, "n2", RoleNode},
		{"client certificate as server", alice.ServerConfig(ServerOptions{}), n2.ClientConfig("alice", ""), false, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scs, _, err := handshake(t, at(c.server), at(c.client))
			if !c.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			id, err := PeerIdentity(scs)
			if c.peerRole == 0 {
				require.ErrorIs(t, err, ErrNoIdentity)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.peerRole, id.Role)
			name, err := PeerName(scs)
			if c.peerRole != RoleNode {
				require.ErrorIs(t, err, ErrNoIdentity)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.peerName, name)
		})
	}
}

func TestVerifyConnectionRunsOnResumedSessions(t *testing.T) {
	defer goleak.VerifyNone(t)
	ca := testCA(t)
	n1 := nodeMaterial(t, ca, "n1")
	n2 := nodeMaterial(t, ca, "n2")
	server := at(n1.PeerServerConfig())
	var checks atomic.Int32
	inner := server.VerifyConnection
	server.VerifyConnection = func(cs tls.ConnectionState) error {
		checks.Add(1)
		return inner(cs)
	}
	client := at(n2.ClientConfig("n1", ""))
	client.ClientSessionCache = tls.NewLRUClientSessionCache(4)

	_, ccs, err := handshake(t, server, client)
	require.NoError(t, err)
	require.False(t, ccs.DidResume)
	scs, ccs, err := handshake(t, server, client)
	require.NoError(t, err)
	require.True(t, ccs.DidResume, "the second handshake resumes")
	require.Equal(t, int32(2), checks.Load(), "the identity check ran on the resumed session too")
	name, err := PeerName(scs)
	require.NoError(t, err)
	require.Equal(t, "n2", name)
}

func TestTransportSpeaksHTTP2(t *testing.T) {
	defer goleak.VerifyNone(t)
	ca := testCA(t)
	n1 := nodeMaterial(t, ca, "n1")
	n2 := nodeMaterial(t, ca, "n2")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, err := PeerName(*r.TLS)
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, r.Proto+" "+name)
	}))
	srv.TLS = n1.PeerServerConfig()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	tr := n2.Transport()
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "HTTP/2.0 n2", string(body))
}

func TestTransportRefusesAPeerWithoutH2(t *testing.T) {
	defer goleak.VerifyNone(t)
	ca := testCA(t)
	n1 := nodeMaterial(t, ca, "n1")
	n2 := nodeMaterial(t, ca, "n2")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = n1.PeerServerConfig()
	srv.TLS.NextProtos = []string{"http/1.1"}
	srv.StartTLS()
	defer srv.Close()

	tr := n2.Transport()
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	_, err = (&http.Client{Transport: tr}).Do(req)
	require.ErrorContains(t, err, "not h2")
}

func TestTransportBoundsAStalledHandshake(t *testing.T) {
	defer goleak.VerifyNone(t)
	ca := testCA(t)
	n2 := nodeMaterial(t, ca, "n2")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // never answers the ClientHello
		}
		close(accepted)
	}()
	defer func() {
		if c, ok := <-accepted; ok {
			_ = c.Close()
		}
	}()

	tr := n2.Transport()
	defer tr.CloseIdleConnections()
	// The request's own context has no deadline: only the handshake bound
	// can end it.
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://"+ln.Addr().String(), nil)
	require.NoError(t, err)
	_, err = (&http.Client{Transport: tr}).Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func FuzzParseMaterial(f *testing.F) {
	ca := testCA(f)
	n, err := ca.IssueNode("n1", nil, Options{Now: issueTime})
	require.NoError(f, err)
	f.Add(ca.CertPEM, n.CertPEM, n.KeyPEM)
	f.Add(ca.CertPEM, n.CertPEM, []byte("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, caPEM, certPEM, keyPEM []byte) {
		m, err := ParseMaterial(caPEM, certPEM, keyPEM)
		if err != nil {
			require.ErrorIs(t, err, ErrMaterial)
			return
		}
		require.NotEmpty(t, m.Identity.Name)
	})
}
