package pki

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxPEMBytes bounds every file this package reads.
const maxPEMBytes = 1 << 20

// CACertPath is the CA certificate in dir.
func CACertPath(dir string) string { return filepath.Join(dir, "ca.crt") }

// CAKeyPath is the CA private key in dir.
func CAKeyPath(dir string) string { return filepath.Join(dir, "ca.key") }

// NodeCertPath is node name's certificate in dir.
func NodeCertPath(dir, name string) string { return filepath.Join(dir, "node-"+name+".crt") }

// NodeKeyPath is node name's private key in dir.
func NodeKeyPath(dir, name string) string { return filepath.Join(dir, "node-"+name+".key") }

// ClientCertPath is client name's certificate in dir.
func ClientCertPath(dir, name string) string { return filepath.Join(dir, "client-"+name+".crt") }

// ClientKeyPath is client name's private key in dir.
func ClientKeyPath(dir, name string) string { return filepath.Join(dir, "client-"+name+".key") }

// WriteCA writes ca.crt (0644) and ca.key (0600) into dir, creating dir
// (0700) if needed. It refuses (ErrExists) when either file exists.
func WriteCA(dir string, ca *CA) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		return fmt.Errorf("%w: encode CA key: %v", ErrMaterial, err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return writePair(dir, CACertPath(dir), CAKeyPath(dir), ca.CertPEM, keyPEM)
}

// WriteCertificate writes c's certificate (0644) and key (0600), creating
// their directory (0700) if needed. It refuses (ErrExists) when either file
// exists.
func WriteCertificate(certPath, keyPath string, c *Certificate) error {
	return writePair(filepath.Dir(certPath), certPath, keyPath, c.CertPEM, c.KeyPEM)
}

func writePair(dir, certPath, keyPath string, certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: create %q: %v", ErrMaterial, dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
		return fmt.Errorf("%w: create %q: %v", ErrMaterial, filepath.Dir(keyPath), err)
	}
	for _, p := range []string{certPath, keyPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%w: %q", ErrExists, p)
		}
	}
	// The key first: a crash between the two leaves a key without a
	// certificate, which a retry refuses loudly instead of pairing a
	// certificate with a key it was not issued for.
	if err := writeNew(keyPath, keyPEM, 0o600); err != nil {
		return err
	}
	return writeNew(certPath, certPEM, 0o644)
}

func writeNew(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %q", ErrExists, path)
	}
	if err != nil {
		return fmt.Errorf("%w: create %q: %v", ErrMaterial, path, err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("%w: write %q: %v", ErrMaterial, path, err)
	}
	return nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMaterial, err)
	}
	defer f.Close()
	buf := make([]byte, maxPEMBytes+1)
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			break
		}
	}
	if n > maxPEMBytes {
		return nil, fmt.Errorf("%w: %q is larger than %d bytes", ErrMaterial, path, maxPEMBytes)
	}
	return buf[:n], nil
}

// LoadCA reads ca.crt and ca.key from dir, for issuing more certificates.
func LoadCA(dir string) (*CA, error) {
	certPEM, err := readBounded(CACertPath(dir))
	if err != nil {
		return nil, err
	}
	keyPEM, err := readBounded(CAKeyPath(dir))
	if err != nil {
		return nil, err
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CACertPath(dir), err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%w: %q is not a CA certificate", ErrMaterial, CACertPath(dir))
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CAKeyPath(dir), err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%w: %q does not belong to %q", ErrMaterial, CAKeyPath(dir), CACertPath(dir))
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: not a PEM CERTIFICATE block", ErrMaterial)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMaterial, err)
	}
	return c, nil
}

func parseKeyPEM(b []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%w: not a PEM key block", ErrMaterial)
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM block %q is not a private key", ErrMaterial, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMaterial, err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: the key is %T, not ECDSA", ErrMaterial, key)
	}
	return ec, nil
}

// Material is what a process needs for TLS: the CA pool it trusts, its own
// certificate and key, and the identity that certificate carries.
type Material struct {
	// Pool holds the cluster CA.
	Pool *x509.CertPool
	// Certificate is this process's certificate chain and key.
	Certificate tls.Certificate
	// Identity is the nspl identity of Certificate.
	Identity Identity
}

// ParseMaterial builds Material from PEM bytes: the CA certificate(s), this
// process's certificate, and its key. The certificate must be signed by the
// CA and carry exactly the nspl identity its URI SAN names (a node
// identity is preferred when both are present).
func ParseMaterial(caPEM, certPEM, keyPEM []byte) (*Material, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%w: the CA file holds no PEM certificate", ErrMaterial)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMaterial, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMaterial, err)
		}
		pair.Leaf = leaf
	}
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots:       pool,
		CurrentTime: leaf.NotBefore.Add(clockSkewAllowance),
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	}); err != nil {
		return nil, fmt.Errorf("%w: the certificate is not signed by the CA: %v", ErrMaterial, err)
	}
	id, err := identityOf(leaf)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMaterial, err)
	}
	return &Material{Pool: pool, Certificate: pair, Identity: id}, nil
}

func identityOf(c *x509.Certificate) (Identity, error) {
	if name, ok := identityFromURIs(c.URIs, RoleNode); ok {
		return Identity{Role: RoleNode, Name: name}, nil
	}
	if name, ok := identityFromURIs(c.URIs, RoleClient); ok {
		return Identity{Role: RoleClient, Name: name}, nil
	}
	return Identity{}, fmt.Errorf("%w: the certificate has no %s:// or %s:// URI SAN", ErrNoIdentity, NodeScheme, ClientScheme)
}

// LoadFiles reads Material from three PEM files (the --ca, --cert and --key
// flags of a client).
func LoadFiles(caFile, certFile, keyFile string) (*Material, error) {
	caPEM, err := readBounded(caFile)
	if err != nil {
		return nil, err
	}
	certPEM, err := readBounded(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readBounded(keyFile)
	if err != nil {
		return nil, err
	}
	m, err := ParseMaterial(caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	return m, nil
}

// LoadNode reads node name's Material from dir (ca.crt, node-<name>.crt,
// node-<name>.key) and checks that the certificate names that node.
func LoadNode(dir, name string) (*Material, error) {
	return load(dir, name, RoleNode, NodeCertPath(dir, name), NodeKeyPath(dir, name))
}

// LoadClient reads client name's Material from dir (ca.crt,
// client-<name>.crt, client-<name>.key).
func LoadClient(dir, name string) (*Material, error) {
	return load(dir, name, RoleClient, ClientCertPath(dir, name), ClientKeyPath(dir, name))
}

func load(dir, name string, role Role, certPath, keyPath string) (*Material, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	m, err := LoadFiles(CACertPath(dir), certPath, keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w; make it with nspl cert %s %s --dir %s (after nspl cert ca --dir %s)", err, role, name, dir, dir)
	}
	if err != nil {
		return nil, err
	}
	if want := (Identity{Role: role, Name: name}); m.Identity != want {
		return nil, fmt.Errorf("%w: %q names %s, not %s", ErrMaterial, certPath, m.Identity, want)
	}
	return m, nil
}
