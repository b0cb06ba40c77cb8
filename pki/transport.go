package pki

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The HTTP/2 client policy. Every HTTP client nspl builds, a node calling
// its peers (Material.Transport) and a remote client calling a node
// (package client), is net/http's Transport speaking HTTP/2 and nothing
// else, its Protocols set by HTTP2Only: HTTP/2 over TLS, or for a loopback
// http:// URL unencrypted HTTP/2 with prior knowledge. A server that offers
// only HTTP/1.1 is refused rather than spoken to in it. None uses x/net's
// http2.Transport, which is deprecated for net/http's.
//
// A request whose connection becomes unusable before it was processed (a
// GOAWAY, a refused stream) is retried on a new connection with a fresh body
// from Request.GetBody, which http.NewRequest sets for the in-memory bodies
// nspl sends. net/http's HTTP/2 client waits for the abandoned attempt to
// close its body before it rewinds (golang/go#60041), so no attempt still
// writes the body a retry reads (the race of golang/go#41234, which an
// earlier x/net transport here stood in for).

// HTTP2Only returns the protocol set of an nspl HTTP client: HTTP/2 over
// TLS, or, when cleartext is set, unencrypted HTTP/2 with prior knowledge
// (for a loopback http:// URL). HTTP/1 is never in it.
func HTTP2Only(cleartext bool) *http.Protocols {
	var p http.Protocols
	if cleartext {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	return &p
}

// Bounds of a peer transport: one connection's set-up, the keep-alive of
// an idle one, and the HTTP/2 health check of a connection that has gone
// quiet (a PING after peerPingAfter without a frame, the connection closed
// when no answer comes within peerPingTimeout).
const (
	dialTimeout      = 2 * time.Second
	handshakeTimeout = 2 * time.Second
	tcpKeepAlive     = 15 * time.Second
	peerIdleTimeout  = 90 * time.Second
	peerPingAfter    = 15 * time.Second
	peerPingTimeout  = 5 * time.Second
)

// Transport returns the HTTP/2-only client transport (HTTP2Only) a node
// calls its peers with: TLS from ClientConfig("", ""), the server name taken
// from each dialled address, dial and handshake each bounded, a connection
// that did not negotiate h2 refused, an idle connection closed after 90 s,
// and a quiet one pinged after 15 s and closed when no answer comes within
// 5 s. CloseIdleConnections closes its idle connections.
func (m *Material) Transport() *http.Transport {
	return m.TransportDial(nil)
}

// TransportDial is Transport whose TCP connections dial opens in place of
// a net.Dialer (tests route them through a fault layer); nil is Transport.
func (m *Material) TransportDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	cfg := m.ClientConfig("", "")
	return &http.Transport{
		Protocols: HTTP2Only(false),
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialTLS(ctx, network, addr, cfg, dial)
		},
		IdleConnTimeout: peerIdleTimeout,
		HTTP2: &http.HTTP2Config{
			SendPingTimeout: peerPingAfter,
			PingTimeout:     peerPingTimeout,
		},
	}
}

// dialTLS dials addr and completes the TLS handshake, each within its own
// bound, and insists on h2. An empty cfg.ServerName is the host of addr.
func dialTLS(ctx context.Context, network, addr string, cfg *tls.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("pki: dial %q: %w", addr, err)
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: tcpKeepAlive}).DialContext
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
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		_ = conn.Close()
		return nil, fmt.Errorf("pki: %s negotiated %q, not h2", addr, p)
	}
	return conn, nil
}
