package catalog

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// Config configures a catalog node.
type Config struct {
	// NodeName is the name this process registers in the node registry. It
	// must not be empty.
	NodeName string
	// DataDir, when set, makes the catalog durable: the raft log and stable
	// store live in DataDir/catalog/raft.db (raft-boltdb v2, fsync on every
	// write), snapshots in DataDir/catalog/snapshots, and the raft server ID
	// in DataDir/catalog/server-id. Empty keeps everything in memory for the
	// life of the Replica.
	DataDir string
	// Incarnation, when nonzero, is this process's incarnation instead of
	// a fresh random one, for an in-memory catalog of one embedded node
	// whose runs must repeat byte for byte (an engine on virtual time).
	// With DataDir it is refused: a durable catalog's every open must be a
	// new incarnation, so a restarted process never acts as the one before
	// it.
	Incarnation uint64
	// APIAddress is the client address this node advertises in the
	// registry; it may be empty for an embedded node.
	APIAddress string
	// Logger receives raft's and the catalog's logs. Nil means
	// slog.Default().
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of raft's own output that reaches
	// Logger. The zero value is slog.LevelInfo; raft logs every election
	// and snapshot at that level, so an embedded host may prefer Warn.
	RaftLogLevel slog.Level
	// OnChange, when set, is called synchronously on the apply goroutine,
	// in commit order, after every change (including snapshot restores),
	// before the Propose that caused it returns. It already runs during
	// Open, while the node recovers its snapshot and log. It must be fast
	// and must not call Propose or Close (they wait for the apply
	// goroutine). Use Replica.Subscribe for anything slow.
	OnChange func(Change)
	// Clock is the time source for retry timers and Close's bound. Nil means
	// timesource.System().
	Clock timesource.Source
	// Available returns the effectively available node incarnations that
	// the leader's authority reconciliation may choose from. Nil means
	// every registered incarnation (State.Incarnations), which is exact for
	// the embedded single-node catalog; a cluster member passes its
	// gossip and health view. It is called on the node's loop goroutine
	// and must not block.
	Available func(*lifecycle.State) []lifecycle.NodeIncarnation
	// AvailabilityChanged, when set, is where the caller signals that the
	// verdict Available reports has changed: every receive makes a leader
	// reconcile clock authorities at once rather than at the next catalog
	// change. The caller sends without blocking (a buffer of one is
	// enough); the channel may be signalled before Open returns.
	AvailabilityChanged <-chan struct{}

	// Cluster, when set, makes the node a member of a multi-node cluster
	// (see ClusterConfig) instead of the embedded single node: raft over
	// TLS on TCP, cluster timing, joining, and registration through the
	// leader. Open then returns once this incarnation's registration has
	// committed and been applied locally, wherever the leader is.
	Cluster *ClusterConfig

	// SnapshotThreshold is the number of log entries after which raft
	// takes a snapshot; 0 means 8192.
	SnapshotThreshold uint64
	// TrailingLogs is the number of entries kept in the log behind a
	// snapshot; 0 means 10240.
	TrailingLogs uint64
	// SnapshotInterval is how often raft checks SnapshotThreshold; 0 means
	// DefaultSnapshotInterval. Log growth is seen only at these checks, so
	// the interval bounds how far past the threshold the log can grow.
	SnapshotInterval time.Duration
	// CloseTimeout bounds each of Close's two waits for raft futures in
	// flight; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration

	// startHeartbeatTimeout, when set, replaces
	// singleNodeStartHeartbeatTimeout: a test makes it long to show that
	// the embedded node's election does not wait for it.
	startHeartbeatTimeout time.Duration
	// proposeReassignment, when set, replaces Propose for the authority
	// reassignments the leader's reconciliation proposes: a test makes one
	// fail, which nothing in a healthy single-node catalog does, to see it
	// proposed again.
	proposeReassignment func(context.Context, lifecycle.Command) (lifecycle.Result, error)
}

// Defaults of Config.
const (
	// DefaultSnapshotInterval is how often raft checks the log's growth
	// against SnapshotThreshold (raft randomizes each wait between one
	// and two intervals). The check is cheap, and the log a crashed node
	// replays on restart is at most the threshold plus what was written
	// between two checks.
	DefaultSnapshotInterval = time.Second
	// DefaultCloseTimeout bounds each of Close's waits for raft futures.
	DefaultCloseTimeout = 5 * time.Second
)

// Timing of the embedded single-node catalog. A lone voter has no peer to
// hear from, so the heartbeat timeout only sets how long it waits before
// electing itself: raft's minimum of 5ms would put the election 5–10ms
// after open, half of a short-lived shell's run. The node therefore starts
// raft with singleNodeStartHeartbeatTimeout and at once lowers it to
// singleNodeHeartbeatTimeout, which makes a follower re-check its heartbeat
// at once; having never heard from a leader, it stands for election
// without waiting (see electNow). The election timeout is longer so that
// the candidate's durable vote (two fsyncs with a data directory) never
// races a restarted election. A cluster member needs larger values
// (hundreds of milliseconds) and gets them from its own configuration.
const (
	singleNodeHeartbeatTimeout      = 5 * time.Millisecond
	singleNodeStartHeartbeatTimeout = 6 * time.Millisecond
	singleNodeElectionTimeout       = 100 * time.Millisecond
	singleNodeLeaderLease           = 5 * time.Millisecond
	commitTimeout                   = 5 * time.Millisecond
	// maxAppendEntries is the largest batch raft writes to the log in one
	// fsync and hands to ApplyBatch; concurrent Proposes share batches.
	// raft allocates a slice of this size on every commit, so a larger
	// value costs more than it gains once writers are fewer than it.
	maxAppendEntries = 64
	// RetryInterval is how long the node's loop waits before trying again
	// after a proposal did not commit: the confirmation of its leadership
	// and registration, an authority reassignment (the specification's
	// 200 milliseconds: a reconciliation proposal that does not commit is
	// proposed again that much later, with no other change needed), a
	// registration through the leader, or a join.
	RetryInterval = 200 * time.Millisecond
)

// validate checks c and fills defaults into a copy.
func (c Config) withDefaults() (Config, error) {
	if c.NodeName == "" {
		return c, fmt.Errorf("%w: NodeName is empty; give the node a name such as \"local\"", ErrConfig)
	}
	if c.Incarnation != 0 && (c.DataDir != "" || c.Cluster != nil) {
		return c, fmt.Errorf("%w: a fixed Incarnation is for one in-memory embedded node; a durable catalog or a cluster member takes a fresh one on every open", ErrConfig)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = timesource.System()
	}
	if c.Available == nil {
		c.Available = (*lifecycle.State).Incarnations
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = DefaultSnapshotInterval
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	if c.Cluster != nil {
		cc, err := c.Cluster.withDefaults()
		if err != nil {
			return c, err
		}
		c.Cluster = cc
	}
	if c.SnapshotInterval < 5*time.Millisecond {
		return c, fmt.Errorf("%w: SnapshotInterval %s is below raft's minimum of 5ms", ErrConfig, c.SnapshotInterval)
	}
	return c, nil
}

// raftConfig returns the raft configuration of the node: the embedded
// single node's timing, or the cluster's.
func (c Config) raftConfig(id string, logger hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(id)
	rc.HeartbeatTimeout = singleNodeStartHeartbeatTimeout
	if c.startHeartbeatTimeout != 0 {
		rc.HeartbeatTimeout = c.startHeartbeatTimeout
	}
	rc.ElectionTimeout = max(singleNodeElectionTimeout, rc.HeartbeatTimeout)
	rc.LeaderLeaseTimeout = singleNodeLeaderLease
	rc.CommitTimeout = commitTimeout
	if cc := c.Cluster; cc != nil {
		rc.HeartbeatTimeout = cc.HeartbeatTimeout
		rc.ElectionTimeout = cc.ElectionTimeout
		rc.LeaderLeaseTimeout = cc.LeaderLeaseTimeout
		rc.CommitTimeout = cc.CommitTimeout
	}
	rc.MaxAppendEntries = maxAppendEntries
	// No BatchApplyCh: with a buffered apply channel raft can shut down
	// (a removed leader does by itself) with proposals still in the
	// buffer, and never answers them (hashicorp/raft#498), so a statement
	// waited out its deadline and its waiter outlived the node. Unbuffered,
	// a proposal is taken by a running loop, which answers it, or Apply
	// sees the shutdown; writers blocked on the send are still committed
	// together.
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.TrailingLogs = c.TrailingLogs
	rc.SnapshotInterval = c.SnapshotInterval
	rc.NoLegacyTelemetry = true
	rc.Logger = logger
	return rc
}

// Default raft timing of a cluster member, chosen so that a dead leader's
// clocks move within a second without elections under load.
//
// A follower starts an election once it has heard nothing from the leader
// for a heartbeat timeout (raft checks at random intervals of one to two),
// and a leader steps down once it has not heard from a quorum for the
// leader lease timeout, which can be at most the heartbeat timeout. raft's
// pre-vote is on (the hashicorp/raft v1.7 default, PreVoteDisabled unset):
// a node that lost its leader asks for votes only after a majority would
// grant them, so a partitioned or stalled follower that returns does not
// depose a healthy leader; and a voter that still hears from a leader
// grants neither a pre-vote nor a vote. The leader lease (raft's check of
// its quorum) stays at the heartbeat timeout, its largest allowed value: a
// leader steps down only on a stall that would start an election anyway.
//
// The price of short timers is elections when processes stall; their gain
// is the takeover when the leader dies, which waits for its detection (one
// to three heartbeat timeouts) and then FenceWait. BenchmarkFailoverUnderLoad
// (make bench; the in-process 3-node harness with a busy loop per core on a
// 2-core machine) measured, from one run, with 500 ms timers and a 1 s
// lease (FenceWait then also waited out the leader lease): 0 elections and
// 0 lease lapses a minute, a dead leader's clock moved p50 2.57 s, p99
// 3.13 s after the kill; with these defaults: see the README's
// "Consistency and faults". Separate nspl serve processes stall apart and
// more often than members of one process: an earlier measurement with
// 200 ms timers and a 100 ms leader lease saw about 15 elections a minute
// with three processes under busy loops and other builds, most of them
// leaders stepping down after a stall. An operator on such a machine raises
// nspl serve's --heartbeat-timeout, --election-timeout and
// --leader-lease-timeout (500ms each holds about one election in two
// minutes there) and with them --authority-lease, and accepts the slower
// takeover: about twice the heartbeat timeout plus FenceWait.
const (
	DefaultHeartbeatTimeout   = 200 * time.Millisecond
	DefaultElectionTimeout    = 200 * time.Millisecond
	DefaultLeaderLeaseTimeout = 200 * time.Millisecond
	DefaultCommitTimeout      = 5 * time.Millisecond
	// DefaultTransportTimeout bounds one raft RPC's dial and I/O.
	DefaultTransportTimeout = time.Second
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
	// Dial, when set, opens raft's TCP connections to peers in place of a
	// net.Dialer (tests route them through a fault layer). TLS runs over
	// the connection it returns.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
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
	// leadership, on a goroutine of the node, already during Open. It must
	// not block. The node itself reconciles authorities after a leadership
	// or configuration change; the callback need not ask it to.
	OnObservation func(Observation)

	// Raft timing; zero means the Default* constant of the same name.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	TransportTimeout   time.Duration
	// AuthorityLease is how long a member keeps producing ticks without
	// hearing from a leader (see Contact); zero means one and a half
	// election timeouts (DefaultAuthorityLease with the default timing),
	// so raising the timers for a busy machine lengthens the lease with
	// them. The leader moves an authority away from a node it lost only
	// after FenceWait.
	AuthorityLease time.Duration
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
	def(&cc.AuthorityLease, authorityLeaseFor(cc.ElectionTimeout))
	if cc.AuthorityLease < 0 {
		return nil, fmt.Errorf("%w: AuthorityLease %s is negative; give a duration such as 1s", ErrConfig, cc.AuthorityLease)
	}
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
