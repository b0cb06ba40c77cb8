package catalog

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime/timesource"
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
	// life of the Node.
	DataDir string
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
	// goroutine). Use Node.Subscribe for anything slow.
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
// electing itself: raft's minimum of 5ms puts the election 5–10ms after
// open. The election timeout is longer so that the candidate's durable vote
// (two fsyncs with a data directory) never races a restarted election. A
// cluster member needs larger values (hundreds of milliseconds) and will get
// them from its own configuration.
const (
	singleNodeHeartbeatTimeout = 5 * time.Millisecond
	singleNodeElectionTimeout  = 100 * time.Millisecond
	singleNodeLeaderLease      = 5 * time.Millisecond
	commitTimeout              = 5 * time.Millisecond
	// maxAppendEntries is the largest batch raft writes to the log in one
	// fsync and hands to ApplyBatch; concurrent Proposes share batches.
	// raft allocates a slice of this size on every commit, so a larger
	// value costs more than it gains once writers are fewer than it.
	maxAppendEntries = 64
	// RetryInterval is how long the node waits before proposing its
	// registration again after a proposal did not commit.
	RetryInterval = 200 * time.Millisecond
)

// validate checks c and fills defaults into a copy.
func (c Config) withDefaults() (Config, error) {
	if c.NodeName == "" {
		return c, fmt.Errorf("%w: NodeName is empty; give the node a name such as \"local\"", ErrConfig)
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
	rc.HeartbeatTimeout = singleNodeHeartbeatTimeout
	rc.ElectionTimeout = singleNodeElectionTimeout
	rc.LeaderLeaseTimeout = singleNodeLeaderLease
	rc.CommitTimeout = commitTimeout
	if cc := c.Cluster; cc != nil {
		rc.HeartbeatTimeout = cc.HeartbeatTimeout
		rc.ElectionTimeout = cc.ElectionTimeout
		rc.LeaderLeaseTimeout = cc.LeaderLeaseTimeout
		rc.CommitTimeout = cc.CommitTimeout
	}
	rc.MaxAppendEntries = maxAppendEntries
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.TrailingLogs = c.TrailingLogs
	rc.SnapshotInterval = c.SnapshotInterval
	rc.NoLegacyTelemetry = true
	rc.Logger = logger
	return rc
}
