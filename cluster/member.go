package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/pki"
)

// Member is one running cluster member. All methods are safe for
// concurrent use.
type Member struct {
	cfg       Config
	logger    *slog.Logger
	src       timesource.Source
	avail     *Availability
	transport *http.Transport
	client    *interconnect.Client
	delivery  *interconnect.Delivery
	watch     *interconnect.InstalledWatch // the peers' installed streams
	handler   http.Handler                 // the interconnect handler, instrumented

	metrics interconnect.Metrics
	ticks   atomic.Uint64
	commits latencyHistogram
	mm      *memberMetrics

	// progressHook, set only by tests (export_test.go), sees every report
	// of this member's producers before delivery does, on the producer's
	// goroutine and under its context.
	progressHook atomic.Pointer[func(context.Context, clockrt.ProgressReport)]

	availChanged chan struct{} // signals the catalog that a verdict changed
	live         liveSignal    // wakes completion waits on a verdict change

	// node exists before anything can call it: its hooks and the views
	// above are wired when it is built, and it opens after them. ready is
	// closed once it has opened; until then the peer handler, which serves
	// while the node opens so a restarting member answers, refuses with
	// ErrNotReady.
	node  *node.Node
	ready chan struct{}

	lastVerdicts string // owned by probeLoop

	statusMu sync.Mutex
	statuses map[string]probeResult // node name → latest probe outcome
	probing  map[string]bool        // node name → probe in flight

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Start starts a member: New, then Open. It returns once this process's
// incarnation is registered in the committed catalog and its node has
// installed the committed domains. ctx bounds the start; a member that
// cannot reach a quorum does not start.
func Start(ctx context.Context, cfg Config) (*Member, error) {
	m, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := m.Open(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// New builds a member that is not open yet: it checks cfg, loads the
// certificate material, and wires the node (built, not opened), progress
// delivery, the installed streams and the peer handler, which answers
// ErrNotReady until Open has opened the node. It starts nothing. A process
// serves the peer handler from here on (package serve), so a restarting
// member answers its peers while it opens; Open it next, or Close it.
func New(cfg Config) (*Member, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := newMember(cfg)
	n, err := node.New(node.Config{
		Name:                cfg.Node,
		DataDir:             cfg.DataDir,
		Logger:              cfg.Logger,
		RaftLogLevel:        cfg.RaftLogLevel,
		TimeSource:          cfg.TimeSource,
		Available:           m.avail.Available,
		AvailabilityChanged: m.availChanged,
		APIAddress:          cfg.APIAddr,
		Forward:             m.forward,
		OnCommit:            m.commits.observe,
		OnProgress:          m.onProgress,
		OnRetire:            m.onRetire,
		AwaitPeers:          m.awaitPeers,
		MaxClockOffset:      cfg.MaxClockOffset,
		MaxDomains:          cfg.MaxDomains,
		Cluster: &catalog.ClusterConfig{
			RaftAddr:           cfg.RaftAddr,
			Listener:           cfg.RaftListener,
			AdvertiseAddr:      cfg.RaftAdvertise,
			ServerTLS:          cfg.Material.PeerServerConfig(),
			ClientTLS:          cfg.Material.ClientConfig("", ""),
			Dial:               cfg.Dial,
			Bootstrap:          cfg.Bootstrap,
			Join:               m.join,
			Forward:            m.forward,
			OnObservation:      m.observe,
			HeartbeatTimeout:   cfg.HeartbeatTimeout,
			ElectionTimeout:    cfg.ElectionTimeout,
			LeaderLeaseTimeout: cfg.LeaderLeaseTimeout,
			CommitTimeout:      cfg.CommitTimeout,
			AuthorityLease:     cfg.AuthorityLease,
		},
	})
	if err != nil {
		m.cancel()
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	m.node = n
	m.registerMetrics(n.MetricsRegistry())
	m.delivery = interconnect.NewDelivery(interconnect.DeliveryConfig{
		Client:         m.client,
		Source:         m.src,
		Peers:          m.peers,
		Required:       m.required,
		RequestTimeout: cfg.ProgressTimeout,
		Backoff:        cfg.ProgressBackoff,
		Accepted:       n.ProgressAccepted,
		Metrics:        &m.metrics,
		Logger:         m.logger,
	})
	m.watch = interconnect.NewInstalledWatch(interconnect.InstalledWatchConfig{
		Client:  m.client,
		Source:  m.src,
		Peers:   m.openedPeers,
		Backoff: cfg.ProgressBackoff,
		Logger:  m.logger,
	})
	m.handler = m.instrument(interconnect.NewHandler(backend{m}, &m.metrics, m.logger).WithStreamClock(m.src, 0))
	return m, nil
}

// Open opens the member's node: raft over TLS, bootstrapping or joining
// (through Config.Join) as configured, registration of this process's
// incarnation, and installation of the committed domains; then it starts
// the probes and the installation loop. ctx bounds the open. A member
// whose Open failed is closed; Open is called once.
func (m *Member) Open(ctx context.Context) error {
	n := m.node
	if err := n.Open(ctx); err != nil {
		_ = m.Close()
		if errors.Is(err, node.ErrConfig) {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return err
	}
	close(m.ready)
	m.wg.Add(2)
	go m.probeLoop()
	go m.installLoop(n)
	m.logger.Info("cluster member started", "incarnation", n.Identity().Incarnation,
		"raft_addr", n.RaftAddress(), "api_addr", m.cfg.APIAddr)
	return nil
}

// newMember returns a member's own state, built from cfg as withDefaults
// filled it: its clock, probe bookkeeping, interconnect client and
// availability view. New adds the node, progress delivery and installed
// streams; Open starts the loops.
func newMember(cfg Config) *Member {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Member{
		cfg:          cfg,
		logger:       cfg.Logger.With("node_name", cfg.Node),
		src:          cfg.TimeSource,
		transport:    cfg.Material.TransportDial(cfg.Dial),
		statuses:     make(map[string]probeResult),
		probing:      make(map[string]bool),
		availChanged: make(chan struct{}, 1),
		ready:        make(chan struct{}),
		mm:           newMemberMetrics(),
		ctx:          ctx,
		cancel:       cancel,
	}
	m.client = interconnect.NewClient(m.transport)
	m.avail = NewAvailability(m.src, cfg.Node, cfg.UnavailabilityInterval, m.availabilityChanged)
	return m
}

// Node returns the member's node: sessions and the control-plane handler
// run against it.
func (m *Member) Node() *node.Node { return m.node }

// PeerHandler returns the /v1/peer/ handler to mount on the node's API
// listener under interconnect.PathPrefix. That listener's TLS config must
// verify client certificates against the cluster CA.
func (m *Member) PeerHandler() http.Handler { return m.handler }

// Material returns the member's certificate material.
func (m *Member) Material() *pki.Material { return m.cfg.Material }

// APIAddr returns the API address the member registered.
func (m *Member) APIAddr() string { return m.cfg.APIAddr }

// Close stops the member: probes, progress delivery, the installed
// streams, the node (producers, catalog, raft) and idle connections, and waits for
// every goroutine it started. It does not leave the cluster (see Leave).
// It is idempotent.
func (m *Member) Close() error {
	m.closeOnce.Do(func() {
		m.closeErr = m.shutdown()
	})
	return m.closeErr
}

func (m *Member) shutdown() error {
	m.cancel()
	m.delivery.Close()
	m.watch.Close()
	err := m.node.Close()
	m.wg.Wait()
	m.transport.CloseIdleConnections()
	return err
}

// onProgress hands every report of this node's producers to delivery,
// unless the producer was retired meanwhile (ctx ended): its delivery is
// being ended, and must not start again.
func (m *Member) onProgress(ctx context.Context, rep clockrt.ProgressReport) {
	if rep.Failure == nil {
		m.ticks.Add(1)
	}
	if h := m.progressHook.Load(); h != nil {
		(*h)(ctx, rep)
	}
	if ctx.Err() != nil {
		return
	}
	m.delivery.Publish(rep)
}

// onRetire ends the delivery of a retired producer's reports, and returns
// once its in-flight requests and backoffs have ended: only then does the
// node count, and advertise, the revision that retired it.
func (m *Member) onRetire(fence clockrt.ProducerFence) {
	m.delivery.Retire(fence)
}

// required is the delivery's fence check: the revision of the
// installation the producer started from, while rep's fence is still the
// installed one.
func (m *Member) required(rep clockrt.ProgressReport) (uint64, bool) {
	in := m.node.Installation(rep.Domain)
	f, ok := clockrt.FenceOf(in)
	if !ok || f.Generation != rep.Generation || f.Authority != rep.Authority {
		return 0, false
	}
	return in.Lifecycle().Revision, true
}

// peers is the delivery's view of its targets: every other registered
// member with its effective availability and advertised revision.
func (m *Member) peers() []interconnect.Peer {
	nodes := m.node.CatalogState().Nodes()
	m.statusMu.Lock()
	defer m.statusMu.Unlock()
	out := make([]interconnect.Peer, 0, len(nodes))
	for _, nd := range nodes {
		if nd.Name == m.cfg.Node {
			continue
		}
		p := interconnect.Peer{Name: nd.Name, APIAddr: nd.APIAddr, Incarnation: nd.Incarnation, Live: m.avail.Live(nd.NodeIncarnation())}
		if r, ok := m.statuses[nd.Name]; ok && r.healthy && r.status.Incarnation == nd.Incarnation {
			p.Advertised = r.status.AdvertisedRevision
		}
		out = append(out, p)
	}
	return out
}

// openedPeers is the installed streams' view of their targets: peers, and
// none until the node has opened (the view reads its catalog).
func (m *Member) openedPeers() []interconnect.Peer {
	if _, err := m.opened(); err != nil {
		return nil
	}
	return m.peers()
}

// availabilityChanged runs after every change of an availability verdict:
// the leader's catalog reconciles authorities, and delivery re-reads its
// peers.
func (m *Member) availabilityChanged() {
	select {
	case m.availChanged <- struct{}{}:
	default: // a signal is pending already
	}
	m.live.changed()
	m.peersChanged()
}

// peersChanged hands a change of the peer view to delivery and to the
// installed streams.
func (m *Member) peersChanged() {
	m.delivery.PeersChanged()
	m.watch.PeersChanged()
}

// observe translates raft's observations of registered nodes into gossip
// verdicts, and a change of leadership or configuration into a new peer
// view (the catalog reconciles authorities after those by itself).
func (m *Member) observe(o catalog.Observation) {
	switch o.Kind {
	case catalog.HeartbeatFailed, catalog.HeartbeatResumed:
		if o.Node != "" {
			m.avail.ObserveGossip(o.Node, o.Kind == catalog.HeartbeatResumed)
		}
	case catalog.LeaderChanged, catalog.PeerChanged:
		m.peersChanged()
	}
}

// installLoop follows the node's installations: registry changes reach
// the delivery's peer view and the installed streams. (A retired
// authority's delivery is ended by the node's retirement, onRetire.)
func (m *Member) installLoop(n *node.Node) {
	defer m.wg.Done()
	for {
		_, _, changed := n.Installed()
		m.peersChanged()
		select {
		case <-m.ctx.Done():
			return
		case <-changed:
		}
	}
}
