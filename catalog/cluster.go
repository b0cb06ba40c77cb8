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

	"github.com/nspl-dev/nspl/lifecycle"
)

// Default raft timing of a cluster member, chosen for stability on a busy
// machine over the fastest takeover.
//
// A follower starts an election once it has heard nothing from the leader
// for a random time between one and two heartbeat timeouts, and a leader
// steps down once it has not heard from a quorum for the lease timeout. On
// a two-core machine saturated by unrelated busy loops (and other builds),
// processes stall for hundreds of milliseconds at a time: with 200 ms
// timeouts and a 100 ms lease three nspl serve processes held about 15
// elections a minute (most
// leaders stepping down after a 750 ms stall), with 500 ms timeouts and a
// 500 ms lease one in two minutes, with 1 s none.
//
// The price is takeover time when the leader itself dies: it is detected
// only after a heartbeat timeout or two. In the in-process three-node
// harness (BenchmarkAuthorityTakeover, 20 trials of which 6 killed the
// leader), a replacement clock authority committed at p50 295 ms and p99
// 1.46 s with these defaults, against p50 296 ms and p99 0.56 s with 200 ms
// timeouts; the p99 is the leader's death. Killing an authority that is not
// the leader does not depend on these timers. An operator on a quiet machine
// who prefers the faster takeover sets nspl serve's --heartbeat-timeout,
// --election-timeout and --leader-lease-timeout (for example 200ms, 200ms
// and 100ms) and accepts elections under load; the lease can be at most the
// heartbeat timeout.
const (
	DefaultHeartbeatTimeout   = 500 * time.Millisecond
	DefaultElectionTimeout    = 500 * time.Millisecond
	DefaultLeaderLeaseTimeout = 500 * time.Millisecond
	DefaultCommitTimeout      = 5 * time.Millisecond
	// DefaultTransportTimeout bounds one raft RPC's dial and I/O.
	DefaultTransportTimeout = time.Second
	// transportPool is how many idle connections the transport keeps per
	// peer.
	transportPool = 3
)

// ClusterConfig turns a catalog node into a member of a multi-node cluster:
// raft over TCP with mutually authenticated TLS, joining through an
// existing member, and writes forwarded to the leader.
type ClusterConfig struct {
	// RaftAddr is the TCP address raft listens on ("127.0.0.1:0" picks a
	// free port). Ignored when Listener is set.
	RaftAddr string
	// Listener, when set, is the raft listener to use instead of
	// listening on RaftAddr; the node closes it.
	Listener net.Listener
	// AdvertiseAddr is the raft address other members dial; empty means
	// the listener's address.
	AdvertiseAddr string
	// ServerTLS is the TLS config of the raft listener; it must require and
	// verify peer node certificates (pki.Material.PeerServerConfig).
	ServerTLS *tls.Config
	// ClientTLS is the TLS config raft dials peers with; it must present
	// this node's certificate and verify the peer's
	// (pki.Material.ClientConfig).
	ClientTLS *tls.Config
	// Bootstrap makes a node whose stores are empty form a new cluster with
	// itself as its only voter. Ignored when the stores hold state.
	Bootstrap bool
	// Join asks an existing member to add this server as a voter (the
	// member forwards to the leader, which calls AddVoter). The node calls
	// it, every RetryInterval, while its raft configuration does not name
	// it. Nil means the node never joins by itself.
	Join func(ctx context.Context, serverID, raftAddr string) error
	// Forward commits a command through leader, the current leader as this
	// node knows it (its APIAddr is set). The node uses it to register its
	// incarnation while it is not the leader. Nil means the node registers
	// only when it becomes leader.
	Forward func(ctx context.Context, leader Leader, cmd lifecycle.Command) (lifecycle.Result, error)
	// OnObservation receives raft's observations of peer contact and
	// leadership, on a goroutine of the node. It must not block.
	OnObservation func(Observation)

	// Raft timing; zero means the Default* constant of the same name.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	TransportTimeout   time.Duration
}

func (c *ClusterConfig) withDefaults() (*ClusterConfig, error) {
	cc := *c
	if cc.ServerTLS == nil || cc.ClientTLS == nil {
		return nil, fmt.Errorf("%w: a cluster member needs ServerTLS and ClientTLS; raft traffic between nodes is always TLS", ErrConfig)
	}
	if cc.Listener == nil && cc.RaftAddr == "" {
		return nil, fmt.Errorf("%w: RaftAddr is empty; give the raft listener an address such as 127.0.0.1:7000", ErrConfig)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cc.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&cc.ElectionTimeout, DefaultElectionTimeout)
	def(&cc.LeaderLeaseTimeout, DefaultLeaderLeaseTimeout)
	def(&cc.CommitTimeout, DefaultCommitTimeout)
	def(&cc.TransportTimeout, DefaultTransportTimeout)
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"HeartbeatTimeout", cc.HeartbeatTimeout}, {"ElectionTimeout", cc.ElectionTimeout}, {"LeaderLeaseTimeout", cc.LeaderLeaseTimeout}} {
		if d.v < 5*time.Millisecond {
			return nil, fmt.Errorf("%w: %s %s is below raft's minimum of 5ms", ErrConfig, d.name, d.v)
		}
	}
	if cc.LeaderLeaseTimeout > cc.HeartbeatTimeout {
		return nil, fmt.Errorf("%w: LeaderLeaseTimeout %s exceeds HeartbeatTimeout %s", ErrConfig, cc.LeaderLeaseTimeout, cc.HeartbeatTimeout)
	}
	return &cc, nil
}

// ObservationKind names what raft observed.
type ObservationKind int

// Observation kinds.
const (
	// HeartbeatFailed: the leader's heartbeat to ServerID failed.
	HeartbeatFailed ObservationKind = iota + 1
	// HeartbeatResumed: the leader's heartbeats to ServerID succeed again.
	HeartbeatResumed
	// LeaderChanged: the leader is now ServerID (empty: none known).
	LeaderChanged
	// PeerChanged: ServerID was added to or removed from the
	// configuration (Removed says which).
	PeerChanged
)

// Observation is one raft observation, translated so callers never see
// raft types. ServerID is a raft server ID; State.NodeByServerID names it.
type Observation struct {
	Kind     ObservationKind
	ServerID string
	Removed  bool
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
	td := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: l.client}
	c, err := td.DialContext(ctx, "tcp", string(address))
	if err != nil {
		return nil, err
	}
	return l.track(c)
}

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
	layer := &tlsStreamLayer{ln: tls.NewListener(ln, cc.ServerTLS), advertise: adv, client: cc.ClientTLS, conns: make(map[*trackedConn]struct{})}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  layer,
		MaxPool: transportPool,
		Timeout: cc.TransportTimeout,
		Logger:  hl,
	}), nil
}
