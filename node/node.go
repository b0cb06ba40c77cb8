package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/metrics"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultName is the node name of an embedded node whose Config leaves Name
// empty.
const DefaultName = "local"

// Config configures a Node.
type Config struct {
	// Name is the node name registered in the catalog. Empty means
	// DefaultName.
	Name string
	// DataDir, when set, makes the catalog durable under DataDir (see
	// catalog.Config.DataDir). Empty keeps everything in memory.
	DataDir string
	// Logger receives the node's logs. Nil means slog.Default().
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of raft's own output that reaches
	// Logger (catalog.Config.RaftLogLevel).
	RaftLogLevel slog.Level
	// TimeSource is the node's only physical clock: UTC samples for START,
	// clock reads, producer timers and catalog retry timers. Nil means
	// timesource.System().
	TimeSource timesource.Source
	// ConsensusTimeSource times what waits on the consensus library, which
	// runs on real time whatever TimeSource is: the catalog's timers, and a
	// write's deadline and retry backoff. Nil means TimeSource. An engine
	// on virtual time passes the system clock here, so a write that waits
	// for raft (a retry through an election) waits in real time instead of
	// for virtual time that moves only when its script waits.
	ConsensusTimeSource timesource.Source
	// Incarnation, when nonzero, fixes the node's incarnation (see
	// catalog.Config.Incarnation): for an embedded in-memory node whose
	// runs must repeat.
	Incarnation uint64
	// Available returns the effectively available node incarnations, for
	// START's initial authority and the leader's reconciliation. Nil means
	// every registered incarnation, which is exact for one embedded node.
	Available func(*lifecycle.State) []lifecycle.NodeIncarnation
	// AvailabilityChanged, when set, is signalled (without blocking) when
	// Available's verdict changes, so a leader reconciles clock
	// authorities at once (catalog.Config.AvailabilityChanged).
	AvailabilityChanged <-chan struct{}
	// APIAddress is the API address this node registers, where peers
	// reach its interconnect; empty for an embedded node.
	APIAddress string
	// Cluster, when set, makes the node a cluster member
	// (catalog.Config.Cluster): raft over TLS, joining, registration
	// through the leader.
	Cluster *catalog.ClusterConfig
	// Forward, when set, makes one attempt to commit a command through
	// leader, the consensus leader as this node knows it (another node,
	// with its APIAddr set). The control-plane handler uses it when this
	// node is not the leader, so a statement's reply is the same wherever
	// its session is; without it a follower's write fails with
	// catalog.ErrNotLeader. It has the shape of
	// catalog.ClusterConfig.Forward, so a member passes one function to both.
	Forward func(ctx context.Context, leader catalog.Leader, cmd lifecycle.Command) (lifecycle.Result, error)
	// OnCommit, when set, receives the latency of every command the
	// control-plane handler committed (locally or through Forward), measured
	// on TimeSource's monotonic clock. It must not block.
	OnCommit func(time.Duration)
	// MaxClockOffset bounds how far ahead of this node's UTC a clock
	// authority's may be: a received report whose tick or authority UTC is
	// further ahead is refused (clockrt.Registry.SetMaxClockOffset). Zero
	// means clockrt.DefaultMaxClockOffset; negative is ErrConfig.
	MaxClockOffset time.Duration
	// MaxDomains is the most domains a CREATE DOMAIN or a restore through
	// this node may leave in the catalog; past it they are refused with
	// lifecycle.ErrDomainLimit and nothing is proposed. Zero means
	// DefaultMaxDomains; negative is ErrConfig. It is checked against the
	// committed catalog before proposing, so writers racing through other
	// nodes (or this one) at the limit can each pass it once.
	MaxDomains int
	// OnProgress, when set, receives every report this node's producers
	// emit, after it was applied locally, on the producer's goroutine. It is
	// where peer delivery attaches. It must not block, except on ctx, which
	// ends when the producer is retired: the retirement waits for the call
	// to return.
	OnProgress func(ctx context.Context, rep clockrt.ProgressReport)
	// OnRetire, when set, is called once for every producer this node
	// retires, with its fence, after its goroutine has returned (so after
	// its last OnProgress call). It ends the peer delivery of the fence's
	// reports, cancelling in-flight requests and backoffs, and returns
	// once that delivery has stopped. The revision that retired the
	// producer counts as installed only after it returns (Installed), so
	// it must not wait on anything else.
	OnRetire func(fence clockrt.ProducerFence)
	// WriteTimeout bounds how long a statement's write whose context has
	// no deadline keeps retrying through a leadership change. Zero means
	// DefaultWriteTimeout. It also bounds, from the commit, the wait for
	// the statement's completion boundary on the other nodes.
	WriteTimeout time.Duration
	// AwaitPeers, when set, makes a statement's write a cluster-wide
	// completion boundary: after this node installed the committed
	// revision (Installed: its producers included), it waits until every
	// other live node has installed it too,
	// or ctx ends, and returns the names of the live nodes that had not
	// (a node that stops being live meanwhile ends its wait and is named).
	// Nil, for an embedded node, waits for this node alone.
	AwaitPeers func(ctx context.Context, revision uint64) (unconfirmed []string)
}

// Node is one running nspl node. All methods are safe for concurrent use.
type Node struct {
	cfg      Config
	logger   *slog.Logger
	src      timesource.Source
	csrc     timesource.Source // Config.ConsensusTimeSource, or src
	registry *clockrt.Registry
	catalog  *catalog.Replica

	// installMu serialises installations from the apply goroutine and
	// from Open.
	installMu    sync.Mutex
	ready        bool   // Open has installed the caught-up state
	installedRev uint64 // newest catalog revision installed
	// installs counts the domain installations and removals the node
	// made, so a test can hold a commit to the domains it changed.
	installs atomic.Uint64

	// counter is the installation counter watch.
	counterMu   sync.Mutex
	count       uint64
	countRev    uint64
	countChange chan struct{}

	producers *producerSet
	lease     *authorityLease // nil until Open
	withheld  withheldReports // ticks emit withheld while the lease did not vouch
	steps     *stepWatch      // a cluster member's watch on forward steps of its UTC; nil embedded
	// uninstalled is the running paced domains without an installed clock
	// (no assigned authority), for readiness.
	uninstalled uninstalledSet
	refused     *refusedProgress
	metrics     func() *prometheus.Registry // the node's own, built on first use (MetricsRegistry)

	closed    atomic.Bool   // set first by Close; commit refuses from then on
	done      chan struct{} // closed by Close; ends a write's retry wait
	closeOnce sync.Once
	closeErr  error
}

// New builds a node that is not open yet: its configuration is checked and
// its runtime registry exists, so a member can wire the node's hooks and
// views before anything calls them. Open it with Node.Open, or build and
// open it in one step with the package's Open.
func New(cfg Config) (*Node, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TimeSource == nil {
		cfg.TimeSource = timesource.System()
	}
	if cfg.ConsensusTimeSource == nil {
		cfg.ConsensusTimeSource = cfg.TimeSource
	}
	switch {
	case cfg.MaxClockOffset < 0:
		return nil, fmt.Errorf("%w: max clock offset %s is negative; pass a duration such as 500ms", ErrConfig, cfg.MaxClockOffset)
	case cfg.MaxClockOffset == 0:
		cfg.MaxClockOffset = clockrt.DefaultMaxClockOffset
	}
	switch {
	case cfg.MaxDomains < 0:
		return nil, fmt.Errorf("%w: max domains %d is negative; pass a number of domains such as %d", ErrConfig, cfg.MaxDomains, DefaultMaxDomains)
	case cfg.MaxDomains == 0:
		cfg.MaxDomains = DefaultMaxDomains
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	n := &Node{
		done:        make(chan struct{}),
		cfg:         cfg,
		logger:      cfg.Logger.With("node_name", cfg.Name),
		src:         cfg.TimeSource,
		csrc:        cfg.ConsensusTimeSource,
		registry:    clockrt.NewRegistry(cfg.TimeSource),
		countChange: make(chan struct{}),
	}
	// The registry's collectors cost a measurable share of a short-lived
	// process (nspl -c) that never serves metrics, so the registry is built
	// when first asked for. Raft's process-wide sink is installed now, so
	// what raft reports from the node's first moment reaches it all the
	// same.
	metrics.InstallRaftTelemetry()
	n.metrics = sync.OnceValue(func() *prometheus.Registry {
		r := metrics.NewRegistry()
		r.MustRegister(domainCollector{n})
		return r
	})
	n.registry.SetMaxClockOffset(cfg.MaxClockOffset)
	n.refused = newRefusedProgress(cfg.TimeSource, n.logger)
	return n, nil
}

// Open builds a node (New) and opens it (Node.Open).
func Open(ctx context.Context, cfg Config) (*Node, error) {
	n, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := n.Open(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// Open opens the node's catalog (embedded single-node, in memory unless
// Config.DataDir is set), installs the committed domains and starts the
// producers of the domains this node is the authority of. ctx bounds the
// open. On a reopened data directory the catalog's leader reconciles the
// previous incarnation's authorities to this incarnation, whose producers
// then resume from the unchanged mappings.
//
// Open is called once, before any other method but Name, TimeSource,
// Logger, Installation and Close. Config's hooks may run from the moment it
// begins; the first report reaches Config.OnProgress only once the catalog
// is open. A node whose Open failed holds nothing open and is not opened
// again; Close is then a no-op.
func (n *Node) Open(ctx context.Context) error {
	cfg := n.cfg
	cat, err := catalog.Open(ctx, catalog.Config{
		NodeName:            cfg.Name,
		DataDir:             cfg.DataDir,
		Logger:              cfg.Logger,
		RaftLogLevel:        cfg.RaftLogLevel,
		OnChange:            n.onChange,
		Clock:               n.csrc,
		Incarnation:         cfg.Incarnation,
		Available:           cfg.Available,
		AvailabilityChanged: cfg.AvailabilityChanged,
		APIAddress:          cfg.APIAddress,
		Cluster:             cfg.Cluster,
	})
	if err != nil {
		if errors.Is(err, catalog.ErrConfig) {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return err
	}
	n.catalog = cat
	n.lease = startAuthorityLease(n, cat)
	if cat.AuthorityLease() > 0 {
		n.steps = newStepWatch(n.src, n.cfg.MaxClockOffset, n.logger)
	}
	n.producers = newProducerSet(n)
	// The catalog has applied every committed entry (its registration
	// committed after them). The apply goroutine installed each change as
	// it applied, from the empty catalog or the restored snapshot on, so
	// the registry already holds the state it reached: only the producer
	// set, which the installations before this point did not wake, passes
	// over every domain. Were the registry behind the catalog, the whole
	// reconcile would run here instead.
	n.installMu.Lock()
	n.ready = true
	if s := cat.State(); s.Revision() != n.installedRev {
		n.installLocked(s)
	} else {
		n.producers.installedRevision(n.installedRev, nil, true)
	}
	n.installMu.Unlock()
	return nil
}

// Close stops the producers, closes the catalog and waits for every
// goroutine the node started. It is idempotent; it must not run
// concurrently with Open, and a node that never started has nothing to
// close.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.closed.Store(true)
		close(n.done)
		if n.catalog == nil {
			return // never started
		}
		n.producers.close()
		n.lease.stop()
		n.closeErr = n.catalog.Close()
	})
	return n.closeErr
}

// Name returns the node name.
func (n *Node) Name() string { return n.cfg.Name }

// Identity returns this process's node incarnation: the authority identity
// its producers report under.
func (n *Node) Identity() lifecycle.Identity { return n.catalog.Identity() }

// TimeSource returns the node's physical clock.
func (n *Node) TimeSource() timesource.Source { return n.src }

// Logger returns the node's logger.
func (n *Node) Logger() *slog.Logger { return n.logger }

// Observe returns an observer of the domain's installation and progress on
// this node, for an attachment. It fails with clockrt.ErrDomainMissing when
// the node has not installed the domain; call WaitInstalled first.
func (n *Node) Observe(domain string) (*clockrt.Observer, error) {
	return n.registry.Observe(domain)
}

// ClockFailure returns the failure the domain's authority reported for the
// installed generation (this node's own producer, or a progress report it
// accepted), nil when none.
func (n *Node) ClockFailure(domain string) *clockrt.ClockFailure {
	return n.registry.ClockFailure(domain)
}

// AcceptProgress applies a progress report received from the authenticated
// peer from; see clockrt.Registry.AcceptProgress. A report refused as
// implausible (clockrt.ErrImplausibleProgress) is counted
// (ImplausibleProgress) and logged at most once per ten seconds per domain.
// An accepted clock failure is logged as a warning with its full typed
// report, once per generation, as the authority logged it.
func (n *Node) AcceptProgress(from string, rep clockrt.ProgressReport) (bool, error) {
	ok, err := n.registry.AcceptProgress(from, rep)
	if errors.Is(err, clockrt.ErrImplausibleProgress) {
		n.refused.record(rep.Domain, from, err)
	}
	if err == nil && ok && rep.Failure != nil {
		n.logger.Warn("domain clock failed at its authority", "domain", rep.Domain, "generation", rep.Generation,
			"authority", from, "op", rep.Failure.Op, "err", rep.Failure.Message)
	}
	return ok, err
}

// ImplausibleProgress returns how many received reports this node refused
// as implausible.
func (n *Node) ImplausibleProgress() uint64 { return n.refused.count() }

// Installed returns the installation counter, the catalog revision the
// latest counted installation put in place, and a channel closed when the
// counter next advances. The counter is 0 until the node installed the
// committed domains since it started. A revision counts once its
// lifecycles are installed and every tick producer it (or an earlier
// revision) retires on this node has exited and had its peer delivery
// ended (Config.OnRetire): once STOP's or DROP's revision counts, the
// stopped generation produces nothing more here. Revisions may count
// together, so the counter can advance less often than revisions install.
func (n *Node) Installed() (count, revision uint64, changed <-chan struct{}) {
	n.counterMu.Lock()
	defer n.counterMu.Unlock()
	return n.count, n.countRev, n.countChange
}

// WaitInstalled waits until the node has installed the committed domains
// since it started (the counter is at least 1), or ctx ends.
func (n *Node) WaitInstalled(ctx context.Context) error {
	return n.waitCounter(ctx, func(count, _ uint64) bool { return count > 0 })
}

// WaitInstalledRevision waits until the node has installed the committed
// lifecycles of catalog revision rev or a later one, and retired the
// producers they retire (Installed), or ctx ends.
func (n *Node) WaitInstalledRevision(ctx context.Context, rev uint64) error {
	return n.waitCounter(ctx, func(count, r uint64) bool { return count > 0 && r >= rev })
}

func (n *Node) waitCounter(ctx context.Context, done func(count, rev uint64) bool) error {
	for {
		count, rev, ch := n.Installed()
		if done(count, rev) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Settled reports whether the node has no clock work under way: its
// producer set has reconciled every installation and ended every
// retirement, and every tick producer waits on its timer, having emitted
// what was due when it last read the time. A driver of virtual time
// (nspl.Engine) steps the time source only while it holds, together with
// the source's own Settled and every session's.
func (n *Node) Settled() bool { return n.producers == nil || n.producers.settled() }
