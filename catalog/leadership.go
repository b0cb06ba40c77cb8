package catalog

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// run is the node's one background loop. It follows leadership changes:
// on gaining leadership it confirms it by committing this incarnation's
// registration (see confirm) and reconciles clock authorities; it
// reconciles again after every catalog change that may need it (see
// loopWants), and retries every RetryInterval while it stays leader and
// something did not commit. It stops when the FSM halts. raft's LeaderCh
// never blocks raft (it keeps only the newest value), the change
// subscription never blocks the FSM, and this loop reads both promptly.
func (n *Replica) run(ctx context.Context) {
	defer n.loop.Done()
	sub := n.fsm.changes.subscribeWhen(n.loopWants)
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
	scope := reconcileScope{whole: true}
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
			scope.whole = true
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
		case c, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			scope.add(c)
		case <-retryC:
			retryC = nil
		case <-n.poke:
			scope.whole = true
		case <-n.cfg.AvailabilityChanged:
			scope.whole = true
		}
		if n.raft.State() != raft.Leader {
			// Gaining leadership reconciles everything (above, or in
			// leaderWork when it confirms a new term first).
			scope = reconcileScope{whole: true}
			if n.memberWork(ctx) || ctx.Err() != nil {
				continue
			}
		} else if n.leaderWork(ctx, &voters, &scope) || ctx.Err() != nil {
			scope = reconcileScope{}
			continue
		}
		wait := retryWait(n.fences.soonest)
		n.fences.soonest = 0
		if retry == nil {
			retry = n.clock.NewTimer(wait)
		} else {
			retry.Reset(wait)
		}
		retryC = retry.C()
	}
}

// loopWants reports whether change c gives the loop work, so that the
// changes that give it none (nearly all of them, in a catalog without a
// running paced domain) do not wake it: every change while this
// incarnation is not yet registered (it may be the one that registers it),
// and afterwards, on the leader, every change while its term is not yet
// confirmed and every change that leaves a running paced domain, whose
// authority reconcile may have to move. A follower has nothing to do on a
// change once registered, and a node that gains leadership confirms and
// reconciles on that notice, against the state of the moment. It runs on
// the apply goroutine.
func (n *Replica) loopWants(c Change) bool {
	select {
	case <-n.registered:
	default:
		return true
	}
	if n.raft.State() != raft.Leader {
		return false
	}
	return n.confirmedTerm.Load() != n.raft.CurrentTerm() || c.State.RunsPacedDomain()
}

// leaderWork confirms leadership and reconciles the authorities of scope,
// and reports whether all of it committed.
func (n *Replica) leaderWork(ctx context.Context, voters *voterCache, scope *reconcileScope) bool {
	if n.raft.State() != raft.Leader {
		return false
	}
	rev := n.Revision()
	if term := n.raft.CurrentTerm(); n.confirmedTerm.Load() != term {
		scope.whole = true
		if !n.confirm(ctx, term) {
			return false
		}
	}
	if !n.reconcile(ctx, voters, scope) {
		return false
	}
	n.reconciled.advance(rev)
	return true
}

// Reconciled returns the newest catalog revision this node's loop has, as
// the leader, confirmed its term and reconciled every authority against
// (zero until it has, and it stays where it was once the node stops
// leading), and a channel closed when that revision next moves. A pass
// that reconciled against revision r has also committed everything the
// passes before it proposed, so a caller that waits for a revision at or
// after one it wrote knows that nothing this leader was going to do about
// that write is still under way.
func (n *Replica) Reconciled() (uint64, <-chan struct{}) { return n.reconciled.load() }

// reconciledMark is Reconciled's revision and its change channel.
type reconciledMark struct {
	mu      sync.Mutex
	rev     uint64
	changed chan struct{}
}

func (m *reconciledMark) load() (uint64, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.changed == nil {
		m.changed = make(chan struct{})
	}
	return m.rev, m.changed
}

func (m *reconciledMark) advance(rev uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rev <= m.rev && m.rev != 0 {
		return
	}
	m.rev = rev
	if m.changed != nil {
		close(m.changed)
	}
	m.changed = make(chan struct{})
}

// maxReconcileNames bounds the domains a reconcile scope names; past it the
// leader reconciles the whole catalog once instead.
const maxReconcileNames = 4096

// reconcileScope is what the leader's next reconciliation must look at:
// the whole catalog (on gaining leadership, after a restore, when the
// voters, the topology or the availability changed, when a change named
// too many domains), or only the domains the changes since the last
// successful pass named. Any other domain's reassignment is what the last
// pass found, so a commit costs the leader the domains it touched, not the
// catalog.
type reconcileScope struct {
	whole bool
	names map[string]struct{}
}

// add widens the scope by change c.
func (r *reconcileScope) add(c Change) {
	if r.whole {
		return
	}
	if c.Whole() || len(r.names)+len(c.Domains) > maxReconcileNames {
		r.whole, r.names = true, nil
		return
	}
	if r.names == nil {
		r.names = make(map[string]struct{}, len(c.Domains))
	}
	for _, name := range c.Domains {
		r.names[name] = struct{}{}
	}
}

// list returns the names of a scope that is not whole, sorted, so the
// commands come in the deterministic order a whole pass would give.
func (r *reconcileScope) list() []string {
	out := make([]string, 0, len(r.names))
	for name := range r.names {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// confirm commits this incarnation's registration in term and, when it
// committed while this node is still the leader of term, marks the term's
// leadership confirmed. The registration doubles as the Barrier a new
// leader needs: committing an entry of its own term proves a quorum follows
// it, and its response arrives only after the FSM applied every earlier
// entry. Registering the current incarnation again is a no-op, so every
// later term confirms with the same command.
func (n *Replica) confirm(ctx context.Context, term uint64) bool {
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
		if ctx.Err() != nil {
			return false // the catalog is closing or leadership moved on
		}
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
// current state needs for scope (lifecycle.Reconcile of the whole catalog,
// lifecycle.ReconcileDomains of the named domains) and reports whether
// every one committed. A reassignment refused as a conflict was computed
// against a state that has since changed; the change that caused it
// triggers another pass.
func (n *Replica) reconcile(ctx context.Context, voters *voterCache, scope *reconcileScope) bool {
	s := n.State()
	if !s.RunsPacedDomain() {
		return true // only paced, running domains have an authority
	}
	if epoch := n.fsm.configEpoch.Load(); !voters.valid || voters.epoch != epoch {
		ids, err := n.Voters()
		if err != nil {
			n.logger.Warn("catalog: read voters for reconciliation", "err", err)
			return false
		}
		*voters = voterCache{ids: ids, epoch: epoch, valid: true}
		scope.whole = true // the voters may have changed
	}
	var cmds []lifecycle.Command
	n.reconciles.Add(1)
	if scope.whole {
		n.wholeReconciles.Add(1)
		cmds = lifecycle.Reconcile(s, n.cfg.Available(s), s.VoterNames(voters.ids))
	} else {
		cmds = lifecycle.ReconcileDomains(s, scope.list(), n.cfg.Available(s), s.VoterNames(voters.ids))
	}
	ok := true
	term, now, wait := n.raft.CurrentTerm(), n.clock.Monotonic(), n.fenceWait()
	pending := make(map[lifecycle.Identity]bool)
	n.fences.soonest = 0
	defer func() { n.fences.forget(pending) }()
	for _, cmd := range cmds {
		if ra := cmd.ReassignAuthority; ra != nil && ra.ExpectedFence.Node != "" {
			pending[lifecycle.Identity{Node: ra.ExpectedFence.Node, Incarnation: ra.ExpectedFence.Incarnation}] = true
		}
		if due, left := n.fences.due(term, now, wait, cmd); !due {
			// The authority may still be producing on its side of a cut
			// until its lease runs out (FenceWait); the retry commits the
			// move once it has.
			n.logger.Debug("catalog: authority reassignment waits out the lost authority's lease",
				"domain", cmd.ReassignAuthority.Domain, "authority", cmd.ReassignAuthority.ExpectedFence.String(), "left", left)
			ok = false
			continue
		}
		res, err := n.proposeReassignment(ctx, cmd)
		switch {
		case err != nil && ctx.Err() != nil:
			return false // the catalog is closing or leadership moved on: nothing to warn of
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

// proposeReassignment proposes one of reconcile's reassignments through
// Propose, or through Config.proposeReassignment when a test set it.
func (n *Replica) proposeReassignment(ctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
	if p := n.cfg.proposeReassignment; p != nil {
		return p(ctx, cmd)
	}
	return n.Propose(ctx, cmd)
}

// Term returns the consensus term this replica is in.
func (n *Replica) Term() uint64 { return n.raft.CurrentTerm() }

// IsLeader reports whether this node is the leader with confirmed
// leadership, so that Propose would be admitted.
func (n *Replica) IsLeader() bool {
	return n.raft.State() == raft.Leader && n.confirmedTerm.Load() == n.raft.CurrentTerm()
}

// Voters returns the raft server IDs of the current voters, sorted as raft
// keeps them: the voters argument of lifecycle.State.VoterNames.
func (n *Replica) Voters() ([]string, error) {
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

// reconcileSoon makes a leader reconcile clock authorities now rather than
// at the next catalog change: the topology or leadership changed. It never
// blocks.
func (n *Replica) reconcileSoon() {
	select {
	case n.poke <- struct{}{}:
	default:
	}
}

// Leader is the consensus leader as this node knows it.
type Leader struct {
	// ServerID and RaftAddr are the leader's raft identity.
	ServerID string
	RaftAddr string
	// Name and APIAddr come from the node registry; empty while the
	// leader's registration is not known here.
	Name    string
	APIAddr string
}

// Leader returns the current leader, and false while none is known (an
// election is in progress).
func (n *Replica) Leader() (Leader, bool) {
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return Leader{}, false
	}
	l := Leader{ServerID: string(id), RaftAddr: string(addr)}
	if nd, ok := NodeByServerID(n.State(), l.ServerID); ok {
		l.Name, l.APIAddr = nd.Name, nd.APIAddr
	}
	return l, true
}
