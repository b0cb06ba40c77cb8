package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// Replica is one catalog replica: a raft server over the catalog FSM, its
// stores, and the loop that confirms leadership and registers this
// process's incarnation.
//
// Only the leader writes, and a newly elected leader refuses writes
// (ErrLeadershipUnconfirmed) until an entry of its own term has committed,
// which confirms that a quorum follows it and that its FSM has applied
// every earlier entry (see confirm). All methods are safe for concurrent
// use.
type Replica struct {
	cfg         Config
	logger      *slog.Logger
	clock       timesource.Source
	id          string
	address     raft.ServerAddress
	incarnation uint64

	raft      *raft.Raft
	fsm       *FSM
	stores    *stores
	transport transport
	observer  *raft.Observer // nil unless clustered
	poke      chan struct{}  // wakes the loop: availability changed
	fences    fences         // owned by the loop (fence.go)

	// confirmedTerm is the raft term whose leadership confirm established;
	// writes are admitted only while it equals the current term.
	confirmedTerm atomic.Uint64
	registered    chan struct{} // closed once this incarnation is committed
	reconciled    reconciledMark
	registerOnce  sync.Once
	requestPrefix string        // NewRequestID's name and incarnation part
	requestSeq    atomic.Uint64 // the sequence part of NewRequestID

	cancel context.CancelFunc
	loop   sync.WaitGroup // the leadership loop
	// reconciles and wholeReconciles count the loop's reconciliation
	// passes and those of them over the whole catalog, so a test can hold
	// a commit to a pass over the domains it changed.
	reconciles, wholeReconciles atomic.Uint64

	futures *inflight // callers waiting on raft futures; refuses them once Close begins

	closeOnce sync.Once
	closeErr  error
}

// Open opens a catalog node and returns once it accepts writes: the
// embedded single-node catalog bootstraps itself when its stores are
// empty, elects itself, confirms its leadership and commits this process's
// registration (NodeName, a fresh random incarnation, its raft ID and
// addresses). ctx bounds the whole open; on any error everything opened so
// far is closed again.
//
// With Config.DataDir the raft server ID is read from the data directory
// (created and persisted on first use) and the committed catalog is
// recovered from its snapshots and log.
func Open(ctx context.Context, cfg Config) (*Replica, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger.With("node_name", cfg.NodeName)
	st, err := openStores(cfg.DataDir, newRaftLogger(logger, "raft", hclogLevel(cfg.RaftLogLevel), nil))
	if err != nil {
		return nil, err
	}
	n, err := start(cfg, logger, st)
	if err != nil {
		return nil, errors.Join(err, st.close())
	}
	select {
	case <-n.registered:
		return n, nil
	case <-n.fsm.Halted():
		err = n.fsm.halted()
	case <-ctx.Done():
		err = fmt.Errorf("catalog: open did not finish: %w", ctx.Err())
	}
	return nil, errors.Join(err, n.Close())
}

// start creates the raft server over st and starts the leadership loop.
func start(cfg Config, logger *slog.Logger, st *stores) (*Replica, error) {
	id := st.serverID
	if id == "" {
		var err error
		if id, err = newRandomServerID(); err != nil {
			return nil, err
		}
	}
	incarnation := cfg.Incarnation
	if incarnation == 0 {
		var err error
		if incarnation, err = newIncarnation(); err != nil {
			return nil, err
		}
	}
	repeats := newRepeatLimiter(cfg.Clock, repeatWindow)
	rc := cfg.raftConfig(id, newRaftLogger(logger, "raft", hclogLevel(cfg.RaftLogLevel), repeats))
	// The address is derived from the persisted ID, so it stays the one in
	// the bootstrapped configuration across restarts.
	var addr raft.ServerAddress
	var trans transport
	if cfg.Cluster != nil {
		nt, err := openClusterTransport(cfg.Cluster, newRaftLogger(logger, "raft-net", hclogLevel(cfg.RaftLogLevel), repeats))
		if err != nil {
			return nil, err
		}
		addr, trans = nt.LocalAddr(), nt
	} else {
		addr, trans = raft.NewInmemTransport(raft.ServerAddress("catalog-" + id))
	}
	has, err := st.hasState()
	if err != nil {
		_ = trans.Close()
		return nil, fmt.Errorf("%w: read raft state: %w", ErrDataDir, err)
	}
	if !has && (cfg.Cluster == nil || cfg.Cluster.Bootstrap) {
		boot := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: rc.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(rc, st.log, st.stable, st.snaps, trans, boot); err != nil {
			_ = trans.Close()
			return nil, fmt.Errorf("%w: bootstrap: %w", ErrDataDir, err)
		}
	}
	fsm := NewFSM(logger, cfg.OnChange)
	var committed chan struct{}
	if cfg.Cluster != nil {
		committed = make(chan struct{}, 1)
		fsm.committed = committed
	}
	r, err := raft.NewRaft(rc, fsm, st.log, st.stable, st.snaps, trans)
	if err != nil {
		_ = trans.Close()
		fsm.close()
		// With stores that hold state, this is a snapshot or log that
		// cannot be read back.
		return nil, fmt.Errorf("%w: recover raft state: %v", ErrDataDir, err)
	}
	// A cluster member that is not (or no longer) in its configuration
	// joins through ClusterConfig.Join instead.
	sole, err := checkMembership(r, rc.LocalID)
	if err != nil && cfg.Cluster == nil {
		_ = r.Shutdown().Error()
		_ = trans.Close()
		fsm.close()
		return nil, err
	}
	if sole && cfg.Cluster == nil {
		if err := electNow(r); err != nil {
			// Only the faster start is lost: raft elects this node once
			// the heartbeat timeout passes.
			logger.Warn("catalog: the embedded node waits out its heartbeat timeout before electing itself", "err", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Replica{
		cfg:         cfg,
		logger:      logger,
		clock:       cfg.Clock,
		id:          id,
		address:     addr,
		incarnation: incarnation,
		raft:        r,
		fsm:         fsm,
		stores:      st,
		transport:   trans,
		registered:  make(chan struct{}),
		cancel:      cancel,
		poke:        make(chan struct{}, 1),
		futures:     newInflight(),
	}
	n.requestPrefix = requestPrefix(cfg.NodeName, incarnation)
	if cfg.Cluster != nil && cfg.Cluster.OnObservation != nil {
		n.startObserver(ctx)
	}
	n.loop.Add(1)
	go n.run(ctx)
	if committed != nil {
		n.loop.Add(1)
		go n.announceCommits(ctx, committed)
	}
	return n, nil
}

// checkMembership refuses a data directory whose raft configuration does
// not name this server: its server-id file was lost or replaced, and the
// node would wait forever for an election it cannot take part in. It
// reports whether this server is the configuration's only voter.
func checkMembership(r *raft.Raft, id raft.ServerID) (sole bool, err error) {
	f := r.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, fmt.Errorf("catalog: read raft configuration: %w", err)
	}
	servers := f.Configuration().Servers
	var ids []string
	for _, s := range servers {
		if s.ID == id {
			return s.Suffrage == raft.Voter && len(servers) == 1, nil
		}
		ids = append(ids, string(s.ID))
	}
	return false, fmt.Errorf("%w: its raft configuration names servers %q but not this node's server id %q; restore the %s file that belongs with this log",
		ErrDataDir, ids, id, serverIDFile)
}

// electNow makes a follower that is the only voter of its configuration
// stand for election now instead of after its heartbeat timeout. Lowering
// the heartbeat timeout through ReloadConfig makes raft's follower loop
// re-check its heartbeat at once; a node that has never heard from a
// leader then becomes a candidate, votes for itself (durably, as in any
// election) and, with no other voter to ask, wins. The election is an
// ordinary raft election, only earlier, so nothing is unsafe about it; a
// lone voter has no peer whose leadership it could dispute.
func electNow(r *raft.Raft) error {
	rc := r.ReloadableConfig()
	if rc.HeartbeatTimeout <= singleNodeHeartbeatTimeout {
		return nil // nothing to lower, so raft would not re-check
	}
	rc.HeartbeatTimeout = singleNodeHeartbeatTimeout
	return r.ReloadConfig(rc)
}

// State returns the latest applied catalog state without taking a lock.
// It is shared and read-only: never call Apply on it. On a leader, state
// read before leadership was confirmed may lack entries of the previous
// term; Propose's result is authoritative.
func (n *Replica) State() *lifecycle.State { return n.fsm.State() }

// Revision returns the catalog revision of State.
func (n *Replica) Revision() uint64 { return n.fsm.Revision() }

// Subscribe follows catalog changes; see Subscription. The first value on
// the channel is the current state. Close the subscription when done; the
// node closes it on Close.
func (n *Replica) Subscribe() *Subscription { return n.fsm.changes.subscribe() }

// ServerID returns the raft server ID, stable for the life of the data
// directory (fresh for an in-memory node).
func (n *Replica) ServerID() string { return n.id }

// Name returns the registered node name.
func (n *Replica) Name() string { return n.cfg.NodeName }

// Incarnation returns this process's incarnation, fresh on every Open.
func (n *Replica) Incarnation() uint64 { return n.incarnation }

// Identity returns the node incarnation this process registered.
func (n *Replica) Identity() lifecycle.Identity {
	return lifecycle.Identity{Node: n.cfg.NodeName, Incarnation: n.incarnation}
}

// Snapshot makes raft take a snapshot now and truncate the log behind it
// (keeping Config.TrailingLogs entries). Having nothing new to snapshot is
// not an error.
func (n *Replica) Snapshot() error {
	err := n.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	if err != nil && n.fsm.halted() != nil {
		return n.fsm.halted()
	}
	return n.translate(err, false)
}

// appliedSinceSnapshot reports whether raft has applied entries that its
// latest snapshot does not hold.
func (n *Replica) appliedSinceSnapshot() bool {
	last, err := strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
	return err != nil || n.raft.AppliedIndex() > last
}

// waitFutures waits up to Config.CloseTimeout for every caller waiting
// on a raft future to be answered, and reports whether all were. Those
// still waiting are abandoned: they end if raft ever answers. Close must
// have begun (n.futures.close).
func (n *Replica) waitFutures(when string) bool {
	done := n.futures.drained()
	select {
	case <-done:
		return true
	default:
	}
	timer := n.clock.NewTimer(n.cfg.CloseTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C():
		n.logger.Warn("catalog: abandoning raft futures still unanswered on close; a membership change or write in flight did not complete and its outcome is unknown",
			"waited", n.cfg.CloseTimeout, "when", when)
		return false
	}
}

// isClosed reports whether Close has begun.
func (n *Replica) isClosed() bool { return n.futures.closed() }

// Close stops admitting proposals, waits for the ones in flight to be
// answered (raft is still running, so each commits or fails), takes a
// snapshot so that the next Open replays little log, shuts raft down,
// closes the stores and every subscription, and waits for every goroutine
// the node started. Close is idempotent; it must not be called from
// Config.OnChange.
//
// Close returns within about twice Config.CloseTimeout whatever raft does.
// A future that is still unanswered after CloseTimeout (a membership
// change that cannot commit, say: hashicorp/raft answers such a future
// only when it shuts down, and a configuration change still queued not
// even then) is abandoned with a logged warning, raft is shut down
// regardless, and Close waits at most another CloseTimeout for the
// futures' waiters before it abandons them too.
func (n *Replica) Close() error {
	n.closeOnce.Do(func() {
		n.futures.close()
		n.cancel()
		n.loop.Wait()
		drained := n.waitFutures("before shutting raft down")
		if drained && n.cfg.DataDir != "" && n.appliedSinceSnapshot() {
			// A graceful close snapshots the catalog, so a restart
			// restores it instead of replaying the log since the last
			// snapshot. A failure costs only that replay.
			if err := n.Snapshot(); err != nil {
				n.logger.Warn("catalog: no snapshot on close; the next open replays the log since the last one", "err", err)
			}
		}
		errShutdown := n.raft.Shutdown().Error()
		if !drained {
			n.waitFutures("after shutting raft down")
		}
		n.fsm.close()
		if n.observer != nil {
			n.raft.DeregisterObserver(n.observer)
		}
		errTransport := n.transport.Close()
		errStores := n.stores.close()
		n.closeErr = errors.Join(errShutdown, errTransport, errStores)
		if n.closeErr != nil {
			n.closeErr = fmt.Errorf("catalog: close: %w", n.closeErr)
		}
	})
	return n.closeErr
}

// HasState reports whether dataDir holds a catalog that has been opened
// before (its persisted server ID exists), so a cluster member restarting
// on it needs neither bootstrap nor join.
func HasState(dataDir string) bool {
	if dataDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dataDir, catalogDir, serverIDFile))
	return err == nil
}
