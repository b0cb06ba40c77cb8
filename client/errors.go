package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"strings"
	"syscall"

	"github.com/nspl-dev/nspl/wire"
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
	if hint := connectHint(e.URL, e.Err); hint != "" {
		msg += "; " + hint
	}
	return msg
}

// connectHint says what to do about a failed connection's cause, or ""
// when the cause speaks for itself (ErrUnauthorized, ErrProtocolVersion).
func connectHint(url string, err error) string {
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
	case strings.HasPrefix(url, "http://") && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		// net/http's HTTP/2 transport reports the closed connection so,
		// with no error value to match.
		strings.Contains(err.Error(), "client conn could not be established")):
		// A TLS listener drops plain HTTP/2 at its first bytes.
		return "the node closed the connection at once, as a TLS listener does with plain HTTP; if it serves TLS, connect with https:// (and --ca FILE)"
	}
	return ""
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }
