package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
)

// Defaults of the availability probe.
const (
	// DefaultProbeInterval is how often a member probes each other member.
	DefaultProbeInterval = 200 * time.Millisecond
	// DefaultProbeAttempts is how many attempts one probe makes before it
	// reports the member unhealthy.
	DefaultProbeAttempts = 3
	// DefaultProbeTimeout bounds one attempt.
	DefaultProbeTimeout = 250 * time.Millisecond
	// probeRetryGap is the wait between two attempts of one probe.
	probeRetryGap = 50 * time.Millisecond
	// forwardRetry is the wait between attempts of a remove while an
	// election is in progress, and removeRetryFor bounds how long it keeps
	// trying when its context has no deadline.
	forwardRetry   = 100 * time.Millisecond
	removeRetryFor = 10 * time.Second
	// peerCallTimeout bounds one join or remove call to another member.
	peerCallTimeout = 5 * time.Second
	// raftProofTimeout bounds the TLS handshake that checks a joining or
	// registering node's raft listener presents its certificate.
	raftProofTimeout = 2 * time.Second
)

// DefaultMaxDomains is Config.MaxDomains's default, the node's
// (node.DefaultMaxDomains).
const DefaultMaxDomains = node.DefaultMaxDomains

// Config configures one cluster member.
type Config struct {
	// Node is this member's node name; it must be the name its node
	// certificate carries.
	Node string
	// DataDir holds the catalog (raft log, snapshots, server id). Empty
	// keeps everything in memory, which suits tests only.
	DataDir string
	// RaftAddr is the raft listener's address; RaftListener, when set, is
	// used instead (the member closes it). RaftAdvertise is the address
	// other members dial; empty means the listener's.
	RaftAddr      string
	RaftListener  net.Listener
	RaftAdvertise string
	// APIAddr is the API address (host:port) this member registers, where
	// other members reach its PeerHandler, which the node's API server
	// mounts under interconnect.PathPrefix (package serve wires the two).
	APIAddr string
	// Join lists API addresses of existing members; a member whose raft
	// configuration does not name it asks them, in order, to add it.
	Join []string
	// Bootstrap makes a member with an empty data directory form a new
	// cluster. Ignored once the data directory holds state.
	Bootstrap bool
	// Material is this member's certificate material; nil loads
	// pki.LoadNode(PKIDir, Node).
	Material *pki.Material
	PKIDir   string

	// Raft timing; zero means catalog's cluster defaults (200 ms
	// heartbeat, election and lease timeouts; see
	// catalog.DefaultHeartbeatTimeout for the trade-off).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// AuthorityLease is how long the member keeps producing ticks, and
	// vouching for the clocks it serves, without hearing from a leader;
	// zero means one and a half election timeouts
	// (catalog.DefaultAuthorityLease, 300 ms, with the default timing). A
	// leader moves an authority away from a member it lost only after
	// catalog.FenceWait(AuthorityLease).
	AuthorityLease time.Duration

	// Availability probe; zero means the Default* constants and
	// DefaultUnavailabilityInterval.
	ProbeInterval          time.Duration
	ProbeAttempts          int
	ProbeTimeout           time.Duration
	UnavailabilityInterval time.Duration

	// Progress delivery; zero means interconnect's defaults (2 s request
	// deadline, 200 ms backoff). ProgressBackoff is also the wait before
	// an installed stream that failed is opened again.
	ProgressTimeout time.Duration
	ProgressBackoff time.Duration

	// MaxClockOffset bounds how far ahead of this member's UTC another
	// member's clock may run: a received progress report whose tick or
	// authority UTC is further ahead is refused as implausible
	// (node.Config.MaxClockOffset). Zero means
	// clockrt.DefaultMaxClockOffset (500 ms); negative is ErrConfig.
	MaxClockOffset time.Duration
	// MaxDomains is the most domains a CREATE DOMAIN or a restore through
	// this member may leave in the catalog (node.Config.MaxDomains). Zero
	// means DefaultMaxDomains; negative is ErrConfig.
	MaxDomains int

	// Logger nil means slog.Default(); RaftLogLevel filters raft's own
	// output.
	Logger       *slog.Logger
	RaftLogLevel slog.Level
	// TimeSource is the member's physical clock. Nil means
	// timesource.System().
	TimeSource timesource.Source
	// Dial, when set, opens every TCP connection the member makes to
	// another member (raft, the interconnect, joins, forwarded writes,
	// probes) in place of a net.Dialer; tests route them through a fault
	// layer (internal/faultnet). Nil dials directly.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (c Config) withDefaults() (Config, error) {
	if err := pki.ValidName(c.Node); err != nil {
		return c, fmt.Errorf("%w: node name: %w", ErrConfig, err)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TimeSource == nil {
		c.TimeSource = timesource.System()
	}
	if c.Material == nil {
		if c.PKIDir == "" {
			return c, fmt.Errorf("%w: no certificate material; pass PKIDir (see nspl cert) or Material", ErrConfig)
		}
		m, err := pki.LoadNode(c.PKIDir, c.Node)
		if err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.Material = m
	}
	if c.Material.Identity != (pki.Identity{Role: pki.RoleNode, Name: c.Node}) {
		return c, fmt.Errorf("%w: the certificate names %s, not node %q", ErrConfig, c.Material.Identity, c.Node)
	}
	if c.RaftListener == nil && c.RaftAddr == "" {
		return c, fmt.Errorf("%w: RaftAddr is empty; pass --raft-addr HOST:PORT", ErrConfig)
	}
	if c.APIAddr == "" {
		return c, fmt.Errorf("%w: APIAddr is empty; pass --api-addr HOST:PORT", ErrConfig)
	}
	if !c.Bootstrap && len(c.Join) == 0 && !catalog.HasState(c.DataDir) {
		return c, fmt.Errorf("%w: %w", ErrConfig, ErrNoJoinAddress)
	}
	if c.MaxDomains < 0 {
		return c, fmt.Errorf("%w: max domains %d is negative; pass a number of domains such as %d", ErrConfig, c.MaxDomains, DefaultMaxDomains)
	}
	if c.MaxClockOffset < 0 {
		return c, fmt.Errorf("%w: max clock offset %s is negative; pass a duration such as 500ms", ErrConfig, c.MaxClockOffset)
	}
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.ProbeAttempts <= 0 {
		c.ProbeAttempts = DefaultProbeAttempts
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	return c, nil
}
