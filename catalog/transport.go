package catalog

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// transport is what the node needs of a raft transport: raft's in-memory
// one for the embedded node, the TLS network transport for a member.
type transport interface {
	raft.Transport
	Close() error
}

// tlsStreamLayer is raft's network stream layer over mutually
// authenticated TLS: accepted connections are TLS servers requiring a peer
// node certificate, dialled ones present this node's. It tracks every
// connection and closes them all on Close: raft's NetworkTransport closes
// only its listener, which would leave peers' connection handlers blocked
// on connections a closed node never closes.
type tlsStreamLayer struct {
	ln        net.Listener // a tls.NewListener over the TCP listener
	advertise net.Addr
	client    *tls.Config
	dial      func(ctx context.Context, network, addr string) (net.Conn, error) // nil: net.Dialer
	// handshakeTimeout bounds an accepted connection's TLS handshake; zero
	// means raftHandshakeTimeout.
	handshakeTimeout time.Duration

	mu     sync.Mutex
	closed bool
	conns  map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	layer *tlsStreamLayer
	once  sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.layer.mu.Lock()
		delete(c.layer.conns, c)
		c.layer.mu.Unlock()
	})
	return c.Conn.Close()
}

// track registers c, or closes it when the layer is already closed.
func (l *tlsStreamLayer) track(c net.Conn) (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	tc := &trackedConn{Conn: c, layer: l}
	l.conns[tc] = struct{}{}
	return tc, nil
}

// raftHandshakeTimeout bounds the TLS handshake of an accepted raft
// connection, so a peer that connects and never speaks TLS cannot hold
// raft's per-connection goroutine; after the handshake the connection may
// idle as long as raft keeps it.
const raftHandshakeTimeout = 10 * time.Second

// Accept waits for the next peer connection; its TLS handshake runs on
// the connection's first read, in raft's per-connection goroutine, bounded
// by the layer's handshake timeout.
func (l *tlsStreamLayer) Accept() (net.Conn, error) {
	c, err := l.ln.Accept()
	if err != nil {
		return nil, err
	}
	tc, err := l.track(c)
	if err != nil {
		return nil, err
	}
	conn, ok := c.(*tls.Conn)
	if !ok {
		return tc, nil
	}
	timeout := l.handshakeTimeout
	if timeout <= 0 {
		timeout = raftHandshakeTimeout
	}
	return &acceptedConn{Conn: tc, tls: conn, timeout: timeout}, nil
}

// acceptedConn completes the TLS handshake of an accepted connection
// within a deadline before its first read or write.
type acceptedConn struct {
	net.Conn
	tls     *tls.Conn
	timeout time.Duration
	once    sync.Once
	err     error
}

func (c *acceptedConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		if c.err = c.tls.HandshakeContext(ctx); c.err != nil {
			_ = c.Conn.Close()
		}
	})
	return c.err
}

func (c *acceptedConn) Read(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *acceptedConn) Write(p []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// Close closes the listener and every connection of the layer.
func (l *tlsStreamLayer) Close() error {
	l.mu.Lock()
	l.closed = true
	conns := l.conns
	l.conns = map[*trackedConn]struct{}{}
	l.mu.Unlock()
	err := l.ln.Close()
	for c := range conns {
		_ = c.Conn.Close()
	}
	return err
}

func (l *tlsStreamLayer) Addr() net.Addr { return l.advertise }

// Dial opens a TLS connection to a peer and completes the handshake within
// timeout, so a peer that accepts TCP but never speaks TLS cannot hold raft.
func (l *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if l.dial == nil {
		td := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: l.client}
		c, err := td.DialContext(ctx, "tcp", string(address))
		if err != nil {
			return nil, err
		}
		return l.track(c)
	}
	raw, err := l.dial(ctx, "tcp", string(address))
	if err != nil {
		return nil, err
	}
	cfg := l.client.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(string(address)); err == nil {
			cfg.ServerName = host
		}
	}
	c := tls.Client(raw, cfg)
	if err := c.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	return l.track(c)
}

// transportPool is how many idle connections the transport keeps per
// peer.
const transportPool = 3

// openClusterTransport listens (or takes the given listener) and returns
// raft's TCP transport over TLS.
func openClusterTransport(cc *ClusterConfig, hl hclog.Logger) (*raft.NetworkTransport, error) {
	ln := cc.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cc.RaftAddr); err != nil {
			return nil, fmt.Errorf("%w: listen for raft on %q: %v", ErrConfig, cc.RaftAddr, err)
		}
	}
	var adv net.Addr = ln.Addr()
	if cc.AdvertiseAddr != "" {
		a, err := net.ResolveTCPAddr("tcp", cc.AdvertiseAddr)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("%w: advertise address %q: %v", ErrConfig, cc.AdvertiseAddr, err)
		}
		adv = a
	} else if tcp, ok := adv.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		_ = ln.Close()
		return nil, fmt.Errorf("%w: raft listens on %q, which peers cannot dial; set AdvertiseAddr", ErrConfig, adv)
	}
	layer := &tlsStreamLayer{ln: tls.NewListener(ln, cc.ServerTLS), advertise: adv, client: cc.ClientTLS, dial: cc.Dial, conns: make(map[*trackedConn]struct{})}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  layer,
		MaxPool: transportPool,
		Timeout: cc.TransportTimeout,
		Logger:  hl,
	}), nil
}
