package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"time"
)

// Validity defaults.
const (
	// DefaultCAValidity is how long a development CA is valid.
	DefaultCAValidity = 10 * 365 * 24 * time.Hour
	// DefaultValidity is how long a node or client certificate is valid.
	DefaultValidity = 2 * 365 * 24 * time.Hour
	// clockSkewAllowance backdates NotBefore so a host whose clock is a
	// little behind the issuer's still accepts a fresh certificate.
	clockSkewAllowance = 5 * time.Minute
)

// Options are the inputs of creating a CA or issuing a certificate.
type Options struct {
	// Now is the issue time; NotBefore is five minutes before it. It must be
	// set: this package never reads the clock.
	Now time.Time
	// Validity is how long the certificate is valid after Now; zero means
	// DefaultCAValidity for a CA and DefaultValidity otherwise.
	Validity time.Duration
	// Rand is the randomness source for keys and serial numbers; nil means
	// crypto/rand.
	Rand io.Reader
}

func (o Options) random() io.Reader {
	if o.Rand == nil {
		return rand.Reader
	}
	return o.Rand
}

func (o Options) window(def time.Duration) (time.Time, time.Time, error) {
	if o.Now.IsZero() {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: the issue time is not set; pass Options.Now", ErrMaterial)
	}
	v := o.Validity
	if v == 0 {
		v = def
	}
	if v < 0 {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: validity %s is negative", ErrMaterial, v)
	}
	return o.Now.Add(-clockSkewAllowance), o.Now.Add(v), nil
}

// CA is a certificate authority: its certificate and private key.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertPEM is Cert in PEM form, as written to ca.crt.
	CertPEM []byte
}

// Certificate is an issued node or client certificate with its key.
type Certificate struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a development certificate authority.
func NewCA(o Options) (*CA, error) {
	notBefore, notAfter, err := o.window(DefaultCAValidity)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), o.random())
	if err != nil {
		return nil, fmt.Errorf("%w: generate CA key: %v", ErrMaterial, err)
	}
	serial, err := serialNumber(o.random())
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "nspl development CA", Organization: []string{"nspl"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	der, err := x509.CreateCertificate(o.random(), tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("%w: create CA certificate: %v", ErrMaterial, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: parse CA certificate: %v", ErrMaterial, err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// IssueNode issues the certificate of node name, valid as a TLS server and
// client, with SANs: DNS name, URI nspl-node://name, and each of hosts (IP
// addresses become IP SANs, anything else a DNS SAN). With no hosts the
// certificate also names localhost, 127.0.0.1 and ::1, so a development
// cluster on one machine works out of the box.
func (ca *CA) IssueNode(name string, hosts []string, o Options) (*Certificate, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1", "::1"}
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: []string{"nspl node"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{name},
		URIs:        []*url.URL{identityURI(RoleNode, name)},
	}
	for _, h := range hosts {
		if err := validHost(h); err != nil {
			return nil, err
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != name {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tmpl, o)
}

// IssueClient issues the client certificate of name (URI SAN
// nspl-client://name), valid only for TLS client authentication.
func (ca *CA) IssueClient(name string, o Options) (*Certificate, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: []string{"nspl client"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		URIs:        []*url.URL{identityURI(RoleClient, name)},
	}
	return ca.issue(tmpl, o)
}

func (ca *CA) issue(tmpl *x509.Certificate, o Options) (*Certificate, error) {
	if ca == nil || ca.Cert == nil || ca.Key == nil {
		return nil, fmt.Errorf("%w: no CA certificate and key to issue with", ErrMaterial)
	}
	notBefore, notAfter, err := o.window(DefaultValidity)
	if err != nil {
		return nil, err
	}
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), o.random())
	if err != nil {
		return nil, fmt.Errorf("%w: generate key: %v", ErrMaterial, err)
	}
	serial, err := serialNumber(o.random())
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = notBefore
	tmpl.NotAfter = notAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	tmpl.SubjectKeyId = keyID(&key.PublicKey)
	tmpl.AuthorityKeyId = ca.Cert.SubjectKeyId
	der, err := x509.CreateCertificate(o.random(), tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: create certificate: %v", ErrMaterial, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%w: parse certificate: %v", ErrMaterial, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("%w: encode key: %v", ErrMaterial, err)
	}
	return &Certificate{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serialNumber(r io.Reader) (*big.Int, error) {
	s, err := rand.Int(r, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("%w: serial number: %v", ErrMaterial, err)
	}
	return s.Add(s, big.NewInt(1)), nil
}

func keyID(pub *ecdsa.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return sum[:20]
}
