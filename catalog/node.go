package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

// Node is one catalog member: a raft server over the catalog FSM, its
// stores, and the loop that confirms leadership and registers this
// process's incarnation.
//
// Only the leader writes, and a newly elected leader refuses writes
// (ErrLeadershipUnconfirmed) until an entry of its own term has committed,
// which confirms that a quorum follows it and that its FSM has applied
// every earlier entry (see confirm). All methods are safe for concurrent
// use.
type Node struct {
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

	// confirmedTerm is the raft term whose leadership confirm established;
	// writes are admitted only while it equals the current term.
	confirmedTerm atomic.Uint64
	registered    chan struct{} // closed once this incarnation is committed
	registerOnce  sync.Once
	requestSeq    atomic.Uint64 // the sequence part of NewRequestID

	cancel context.CancelFunc
	loop   sync.WaitGroup // the leadership loop

	closeMu sync.RWMutex
	closed  bool
	waiters sync.WaitGroup // goroutines waiting on raft futures for Propose

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
func Open(ctx context.Context, cfg Config) (*Node, error) {
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
func start(cfg Config, logger *slog.Logger, st *stores) (*Node, error) {
	id := st.serverID
	if id == "" {
		var err error
		if id, err = newRandomServerID(); err != nil {
			return nil, err
		}
	}
	incarnation, err := newIncarnation()
	if err != nil {
		return nil, err
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
	if err := checkMembership(r, rc.LocalID); err != nil && cfg.Cluster == nil {
		_ = r.Shutdown().Error()
		_ = trans.Close()
		fsm.close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{
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
	}
	if cfg.Cluster != nil && cfg.Cluster.OnObservation != nil {
		n.startObserver(ctx)
	}
	n.loop.Add(1)
	go n.run(ctx)
	return n, nil
}

// checkMembership refuses a data directory whose raft configuration does
// not name this server: its server-id file was lost or replaced, and the
// node would wait forever for an election it cannot take part in.
func checkMembership(r *raft.Raft, id raft.ServerID) error {
	f := r.GetConfiguration()
	if err := f.Error(); err != nil {
		return fmt.Errorf("catalog: read raft configuration: %w", err)
	}
	var ids []string
	for _, s := range f.Configuration().Servers {
		if s.ID == id {
			return nil
		}
		ids = append(ids, string(s.ID))
	}
	return fmt.Errorf("%w: its raft configuration names servers %q but not this node's server id %q; restore the %s file that belongs with this log",
		ErrDataDir, ids, id, serverIDFile)
}

// run is the node's one background loop. It follows leadership changes:
// on gaining leadership it confirms it by committing this incarnation's
// registration (see confirm) and reconciles clock authorities; it
// reconciles again after every catalog change, and retries every
// RetryInterval while it stays leader and something did not commit. It
// stops when the FSM halts. raft's LeaderCh never blocks raft (it keeps
// only the newest value), the change subscription never blocks the FSM,
// and this loop reads both promptly.
func (n *Node) run(ctx context.Context) {
	defer n.loop.Done()
	sub := n.fsm.changes.subscribe()
	defer sub.Close()
	changes := sub.C()
	var retry timesource.Timer
	var retryC <-chan time.Time
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	halted := n.fsm.Halted()
	var voters voterCache
	for {
		select {
		case <-ctx.Done():
			return
		case <-halted:
			// The FSM answers every later entry with its HaltError and
			// refuses snapshots; raft keeps running so that Close can
			// drain proposals in flight, and the node proposes nothing.
			n.logger.Error("catalog: the FSM halted; this node refuses writes until it is repaired", "err", n.fsm.halted())
			return
		case leader := <-n.raft.LeaderCh():
			voters.valid = false
			if !leader {
				n.confirmedTerm.Store(0)
				n.logger.Info("catalog: lost leadership")
				continue
			}
			// The notice can arrive after this loop, woken by a change,
			// already confirmed the term it announces: raft elects a
			// leader once per term, so that confirmation still holds.
			// Only a confirmation of an earlier term is stale.
			if n.confirmedTerm.Load() != n.raft.CurrentTerm() {
				n.confirmedTerm.Store(0)
			}
		case _, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
		case <-retryC:
			retryC = nil
		case <-n.poke:
		}
		if n.raft.State() != raft.Leader {
			if n.memberWork(ctx) || ctx.Err() != nil {
				continue
			}
		} else if n.leaderWork(ctx, &voters) || ctx.Err() != nil {
			continue
		}
		if retry == nil {
			retry = n.clock.NewTimer(RetryInterval)
		} else {
			retry.Reset(RetryInterval)
		}
		retryC = retry.C()
	}
}

// leaderWork confirms leadership and reconciles authorities, and reports
// whether all of it committed.
func (n *Node) leaderWork(ctx context.Context, voters *voterCache) bool {
	if n.raft.State() != raft.Leader {
		return false
	}
	if term := n.raft.CurrentTerm(); n.confirmedTerm.Load() != term && !n.confirm(ctx, term) {
		return false
	}
	return n.reconcile(ctx, voters)
}

// confirm commits this incarnation's registration in term and, when it
// committed while this node is still the leader of term, marks the term's
// leadership confirmed. The registration doubles as the Barrier a new
// leader needs: committing an entry of its own term proves a quorum follows
// it, and its response arrives only after the FSM applied every earlier
// entry. Registering the current incarnation again is a no-op, so every
// later term confirms with the same command.
func (n *Node) confirm(ctx context.Context, term uint64) bool {
	cmd := n.registration()
	cmd.RequestID = n.NewRequestID()
	data, err := lifecycle.EncodeCommand(cmd)
	if err != nil {
		// Config validation keeps this from happening; retrying cannot help.
		n.logger.Error("catalog: registration does not encode", "err", err)
		return false
	}
	res, err := n.result(n.apply(ctx, data, false))
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		n.logger.Warn("catalog: could not confirm leadership and registration; retrying", "err", err)
		return false
	}
	if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
		return false
	}
	n.confirmedTerm.Store(term)
	n.registerOnce.Do(func() { close(n.registered) })
	n.logger.Info("catalog: leadership confirmed", "term", term, "incarnation", n.incarnation, "revision", res.Revision)
	return true
}

// voterCache holds the raft voters the loop last read, valid until the
// FSM's configuration epoch moves or leadership changes.
type voterCache struct {
	ids   []string
	epoch uint64
	valid bool
}

// reconcile proposes the compare-and-set authority reassignments that the
// current state needs (lifecycle.Reconcile) and reports whether every one
// committed. A reassignment refused as a conflict was computed against a
// state that has since changed; the change that caused it triggers another
// pass.
func (n *Node) reconcile(ctx context.Context, voters *voterCache) bool {
	s := n.State()
	if !slices.ContainsFunc(s.Domains(), func(d lifecycle.Domain) bool { return d.Pace == lifecycle.Paced && d.Running() }) {
		return true // only paced, running domains have an authority
	}
	if epoch := n.fsm.configEpoch.Load(); !voters.valid || voters.epoch != epoch {
		ids, err := n.Voters()
		if err != nil {
			n.logger.Warn("catalog: read voters for reconciliation", "err", err)
			return false
		}
		*voters = voterCache{ids: ids, epoch: epoch, valid: true}
	}
	cmds := lifecycle.Reconcile(s, n.cfg.Available(s), s.VoterNames(voters.ids))
	ok := true
	for _, cmd := range cmds {
		res, err := n.Propose(ctx, cmd)
		switch {
		case err != nil:
			n.logger.Warn("catalog: authority reassignment did not commit; retrying",
				"domain", cmd.ReassignAuthority.Domain, "err", err)
			ok = false
		case errors.Is(res.Err(), lifecycle.ErrAuthorityConflict):
			n.logger.Info("catalog: authority reassignment superseded", "domain", cmd.ReassignAuthority.Domain, "err", res.Err())
		case res.Err() != nil:
			n.logger.Warn("catalog: authority reassignment refused", "domain", cmd.ReassignAuthority.Domain, "err", res.Err())
			ok = false
		default:
			d, _ := n.State().Domain(cmd.ReassignAuthority.Domain)
			n.logger.Info("catalog: authority reassigned", "domain", d.Name, "authority", d.Authority.String())
		}
	}
	return ok
}

// NewRequestID returns a request id no other proposal of any node has:
// this node's name and incarnation (random, fresh on every Open) and a
// sequence number. A writer that may retry picks one before its first
// attempt and keeps it on every retry (see lifecycle.Command.RequestID).
func (n *Node) NewRequestID() string {
	seq := n.requestSeq.Add(1)
	name := n.cfg.NodeName
	if len(name) > lifecycle.MaxRequestIDLen-48 {
		name = "" // the incarnation alone keeps it unique
	}
	return name + "-" + strconv.FormatUint(n.incarnation, 16) + "-" + strconv.FormatUint(seq, 10)
}

// Propose commits cmd through raft and returns its lifecycle.Result once
// the local FSM has applied it (and Config.OnChange has run). A refused
// command is not an error here: its typed domain error is in
// Result.Failure. The error is nil or one of the catalog sentinels
// (ErrNotLeader, ErrLeadershipUnconfirmed, ErrTimeout and ErrShutdown mean
// nothing was proposed; ErrOutcomeUnknown and ErrLeadershipLost mean it
// may or may not commit), a lifecycle ErrInvalidCommand for a malformed
// command, or ctx's error before anything was proposed.
//
// ctx bounds both the hand-off to raft and the wait for the commit; a
// cancellation after the hand-off returns an error wrapping both
// ErrOutcomeUnknown and ctx's error.
//
// A command without a RequestID gets a fresh one (NewRequestID). Proposing
// a command again with the RequestID of an earlier proposal, after an
// ErrOutcomeUnknown or on another node, commits it at most once: the
// retry answers with the first result (see RequestWindow).
func (n *Node) Propose(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	if cmd.RequestID == "" {
		cmd.RequestID = n.NewRequestID()
	}
	data, err := lifecycle.EncodeCommand(cmd)
	if err != nil {
		return lifecycle.Result{}, err
	}
	return n.result(n.apply(ctx, data, true))
}

// result turns an FSM response into a lifecycle.Result.
func (n *Node) result(resp any, err error) (lifecycle.Result, error) {
	if err != nil {
		return lifecycle.Result{}, err
	}
	switch v := resp.(type) {
	case lifecycle.Result:
		return v, nil
	case *HaltError:
		return lifecycle.Result{}, v
	default:
		return lifecycle.Result{}, fmt.Errorf("%w: apply answered with %T", ErrOutcomeUnknown, resp)
	}
}

// apply hands data to raft and waits for the FSM's response. With
// confirmed set it refuses unless this term's leadership is confirmed.
func (n *Node) apply(ctx context.Context, data []byte, confirmed bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n.isClosed() {
		return nil, ErrShutdown // not "not the leader": no election will help
	}
	if h := n.fsm.halted(); h != nil {
		return nil, h
	}
	if n.raft.State() != raft.Leader {
		return nil, n.translate(raft.ErrNotLeader, false)
	}
	if confirmed && n.confirmedTerm.Load() != n.raft.CurrentTerm() {
		return nil, ErrLeadershipUnconfirmed
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		// A context deadline is a wall-clock instant by definition.
		if timeout = time.Until(dl); timeout <= 0 {
			return nil, ErrTimeout
		}
	}
	// Every future is waited for by a goroutine counted in waiters, and
	// Close drains waiters before it shuts raft down: raft never answers a
	// future still queued when it shuts down, so this is what guarantees
	// that each of them is answered and no waiter is left behind.
	n.closeMu.RLock()
	if n.closed {
		n.closeMu.RUnlock()
		return nil, ErrShutdown
	}
	n.waiters.Add(1)
	n.closeMu.RUnlock()
	f := n.raft.Apply(data, timeout)
	if ctx.Done() == nil {
		err := f.Error()
		n.waiters.Done()
		if err != nil {
			return nil, n.translate(err, true)
		}
		return f.Response(), nil
	}
	done := make(chan error, 1)
	go func() {
		defer n.waiters.Done()
		done <- f.Error()
	}()
	select {
	case err := <-done:
		if err != nil {
			return nil, n.translate(err, true)
		}
		return f.Response(), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// State returns the latest applied catalog state without taking a lock.
// It is shared and read-only: never call Apply on it. On a leader, state
// read before leadership was confirmed may lack entries of the previous
// term; Propose's result is authoritative.
func (n *Node) State() *lifecycle.State { return n.fsm.State() }

// Revision returns the catalog revision of State.
func (n *Node) Revision() uint64 { return n.fsm.Revision() }

// Subscribe follows catalog changes; see Subscription. The first value on
// the channel is the current state. Close the subscription when done; the
// node closes it on Close.
func (n *Node) Subscribe() *Subscription { return n.fsm.changes.subscribe() }

// ServerID returns the raft server ID, stable for the life of the data
// directory (fresh for an in-memory node).
func (n *Node) ServerID() string { return n.id }

// Name returns the registered node name.
func (n *Node) Name() string { return n.cfg.NodeName }

// Incarnation returns this process's incarnation, fresh on every Open.
func (n *Node) Incarnation() uint64 { return n.incarnation }

// Identity returns the node incarnation this process registered.
func (n *Node) Identity() lifecycle.Identity {
	return lifecycle.Identity{Node: n.cfg.NodeName, Incarnation: n.incarnation}
}

// IsLeader reports whether this node is the leader with confirmed
// leadership, so that Propose would be admitted.
func (n *Node) IsLeader() bool {
	return n.raft.State() == raft.Leader && n.confirmedTerm.Load() == n.raft.CurrentTerm()
}

// Voters returns the raft server IDs of the current voters, sorted as raft
// keeps them: the voters argument of lifecycle.State.VoterNames.
func (n *Node) Voters() ([]string, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, n.translate(err, false)
	}
	var ids []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			ids = append(ids, string(s.ID))
		}
	}
	return ids, nil
}

// Snapshot makes raft take a snapshot now and truncate the log behind it
// (keeping Config.TrailingLogs entries). Having nothing new to snapshot is
// not an error.
func (n *Node) Snapshot() error {
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
func (n *Node) appliedSinceSnapshot() bool {
	last, err := strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
	return err != nil || n.raft.AppliedIndex() > last
}

// waitFutures waits up to Config.CloseTimeout for every goroutine waiting
// on a raft future to be answered, and reports whether all were. Those
// still waiting are abandoned: they end if raft ever answers.
func (n *Node) waitFutures(when string) bool {
	done := make(chan struct{})
	go func() {
		n.waiters.Wait()
		close(done)
	}()
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
func (n *Node) isClosed() bool {
	n.closeMu.RLock()
	defer n.closeMu.RUnlock()
	return n.closed
}

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
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.closeMu.Lock()
		n.closed = true
		n.closeMu.Unlock()
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
