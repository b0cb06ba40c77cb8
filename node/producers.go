package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/nspl-dev/nspl/clockrt"
)

// producerSet runs the node's tick producers: one per paced running domain
// whose installed authority is this process's incarnation. One goroutine
// reconciles the set with the registry after every installation; it never
// waits for a producer to exit. It reconciles only the domains installed
// since its previous pass (pending), so its cost follows the change, not the
// catalog; the whole reconcile at open and after a snapshot restore makes
// it pass over every domain once.
//
// Retirement. A producer whose fence no longer matches the installed clock
// is retired: its context is cancelled (which ends an OnProgress call it is
// blocked in), and a goroutine of its own waits for it to exit and then
// ends its peer delivery (Config.OnRetire). Its domain gets a successor
// only after that, so a producer is always gone before its successor
// starts, while the other domains' producers start and retire without
// waiting on it.
//
// Counting. The set owns the node's installation counter (Node.Installed):
// a revision counts as installed once its lifecycles are in the registry
// and every producer that revision, or an earlier one, retires has exited
// and its delivery has ended. This is what makes the completion boundary
// of STOP and DROP, on this node and on every peer that waits for its
// advertised revision, wait for the stopped generation's producer. A
// revision that retires nothing counts at once, on the installing
// goroutine; one that does counts when its last retirement ends. The set
// reconciles against the registry, which may already hold a newer
// revision than the one that woke it, so it cannot tell which of the
// revisions since its previous pass made a producer obsolete: a
// retirement holds the counter at the revision the set had reconciled
// through before it, and no further.
type producerSet struct {
	n       *Node
	wakeC   chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	retires sync.WaitGroup // the retirement goroutines

	mu       sync.Mutex
	running  map[string]*producerRun // domain → its producer
	retiring map[string]*retirement  // domain → its retired producer, until it exited
	// pending names the domains installed, or whose retirement ended,
	// since the loop's previous pass; pendingAll asks that pass for every
	// domain (a whole reconcile).
	pending    map[string]struct{}
	pendingAll bool
	// examined counts the domains the loop's passes looked at, so a test
	// can hold a pass to the domains that changed.
	examined atomic.Uint64
	// installed is the newest revision whose lifecycles the registry
	// holds; reconciled the newest one every producer it retires has been
	// retired for (cancelled, perhaps not exited yet).
	installed, reconciled uint64
	synced                chan struct{} // closed and replaced after each reconciliation and retirement
}

// producerRun is one running producer and the cancellation of the context
// its reports are handed on under.
type producerRun struct {
	p      *clockrt.Producer
	cancel context.CancelFunc
}

// retirement is one retired producer that has not finished exiting. hold
// is the newest revision that may count as installed until it has.
type retirement struct {
	run  *producerRun
	hold uint64
}

func newProducerSet(n *Node) *producerSet {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &producerSet{
		n:        n,
		wakeC:    make(chan struct{}, 1),
		cancel:   cancel,
		done:     make(chan struct{}),
		running:  make(map[string]*producerRun),
		retiring: make(map[string]*retirement),
		pending:  make(map[string]struct{}),
		synced:   make(chan struct{}),
	}
	go ps.loop(ctx)
	return ps
}

// wake asks the loop to reconcile; it never blocks.
func (ps *producerSet) wake() {
	select {
	case ps.wakeC <- struct{}{}:
	default:
	}
}

// close stops the loop and every producer, and waits for them and for
// every retirement under way.
func (ps *producerSet) close() {
	ps.cancel()
	<-ps.done
}

func (ps *producerSet) loop(ctx context.Context) {
	defer close(ps.done)
	defer ps.stopAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ps.wakeC:
			ps.mu.Lock()
			ps.syncLocked()
			ps.syncedLocked()
			ps.mu.Unlock()
		}
	}
}

// installedRevision records that the registry holds the lifecycles of
// revision rev, which installed the named domains (every domain when all
// is set), counts rev at once when it makes no running producer obsolete,
// and wakes the loop to start and retire producers. The installation calls
// it, under Node.installMu, after every installation once the node is
// ready.
func (ps *producerSet) installedRevision(rev uint64, names []string, all bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.installed = rev
	if all {
		ps.pendingAll = true
	}
	for _, name := range names {
		ps.pending[name] = struct{}{}
	}
	if !ps.obsoleteLocked() {
		ps.reconciled = rev
		ps.countLocked()
	}
	ps.wake()
}

// desiredFence returns the fence of the domain's installed clock when it
// wants this incarnation to produce for it.
func (ps *producerSet) desiredFence(name string) (clockrt.ProducerFence, bool) {
	ps.examined.Add(1)
	f, ok := clockrt.FenceOf(ps.n.registry.Current(name))
	return f, ok && f.Authority.Identity() == ps.n.Identity()
}

// current reports whether the installed clock of the producer's domain
// still asks for it.
func (ps *producerSet) current(run *producerRun) bool {
	f, ok := ps.desiredFence(run.p.Fence().Domain)
	return ok && f == run.p.Fence()
}

// obsoleteLocked reports whether a running producer of a pending domain
// (of any domain, when every domain is pending) no longer matches its
// installed clock. The other domains' installations did not change since
// the loop's previous pass, which left their producers current.
func (ps *producerSet) obsoleteLocked() bool {
	if ps.pendingAll || len(ps.pending) > len(ps.running) {
		for _, run := range ps.running {
			if !ps.current(run) {
				return true
			}
		}
		return false
	}
	for name := range ps.pending {
		if run, ok := ps.running[name]; ok && !ps.current(run) {
			return true
		}
	}
	return false
}

// syncLocked retires every producer of a pending domain whose fence no
// longer matches the installed clock and starts the missing ones whose
// domain has no retirement under way, then clears the pending domains. The
// installed revision is read before the registry, so the registry holds at
// least that revision's lifecycles.
func (ps *producerSet) syncLocked() {
	rev := ps.installed
	names := ps.pending
	if ps.pendingAll {
		names = make(map[string]struct{}, len(ps.running))
		for _, name := range ps.n.registry.Domains() {
			names[name] = struct{}{}
		}
		for name := range ps.running {
			names[name] = struct{}{}
		}
	}
	ps.pending, ps.pendingAll = make(map[string]struct{}), false
	for name := range names {
		f, want := ps.desiredFence(name)
		if run, ok := ps.running[name]; ok {
			if want && f == run.p.Fence() {
				continue
			}
			delete(ps.running, name)
			ps.retireLocked(name, run, ps.reconciled)
		}
		if want && ps.retiring[name] == nil {
			ps.startLocked(name, f)
		}
	}
	ps.reconciled = max(ps.reconciled, rev)
	ps.countLocked()
}

// startLocked starts the domain's producer under fence f.
func (ps *producerSet) startLocked(name string, f clockrt.ProducerFence) {
	pctx, cancel := context.WithCancel(context.Background())
	run := &producerRun{cancel: cancel}
	run.p = clockrt.StartProducer(clockrt.ProducerConfig{
		Fence:  f,
		Source: ps.n.src,
		Emit:   func(rep clockrt.ProgressReport) { ps.n.emit(pctx, rep) },
		Logger: ps.n.logger,
	})
	ps.running[name] = run
	ps.n.logger.Info("started tick producer", "domain", name, "generation", f.Generation,
		"authority", f.Authority.String())
}

// retireLocked cancels run and starts the goroutine that waits for it to
// exit, ends its delivery and then lets the counter pass hold.
func (ps *producerSet) retireLocked(name string, run *producerRun, hold uint64) {
	r := &retirement{run: run, hold: hold}
	ps.retiring[name] = r
	run.cancel()
	ps.retires.Add(1)
	go func() {
		defer ps.retires.Done()
		ps.stop(run)
		ps.mu.Lock()
		if ps.retiring[name] == r {
			delete(ps.retiring, name)
			ps.pending[name] = struct{}{} // its successor, if any, is due
		}
		ps.countLocked()
		ps.syncedLocked()
		ps.mu.Unlock()
		ps.wake() // the domain's successor may start now
	}()
}

// stop cancels run, waits until its producer's goroutine has returned
// and ends its peer delivery (Config.OnRetire).
func (ps *producerSet) stop(run *producerRun) {
	run.cancel()
	run.p.Stop()
	f := run.p.Fence()
	if ps.n.cfg.OnRetire != nil {
		ps.n.cfg.OnRetire(f)
	}
	ps.n.logger.Info("retired tick producer", "domain", f.Domain, "generation", f.Generation,
		"authority", f.Authority.String(), "last_tick", run.p.LastTick())
}

// countLocked advances the installation counter to the newest revision
// every retirement under way lets count.
func (ps *producerSet) countLocked() {
	rev := ps.reconciled
	for _, r := range ps.retiring {
		rev = min(rev, r.hold)
	}
	ps.n.advanceCounter(rev)
}

func (ps *producerSet) syncedLocked() {
	close(ps.synced)
	ps.synced = make(chan struct{})
}

// stopAll stops every running producer and waits for them and for the
// retirements under way. The node is closing: nothing counts any more.
func (ps *producerSet) stopAll() {
	ps.mu.Lock()
	running := ps.running
	ps.running = make(map[string]*producerRun)
	ps.mu.Unlock()
	for _, run := range running {
		run.cancel()
	}
	for _, run := range running {
		ps.stop(run)
	}
	ps.retires.Wait()
}

// fence returns the fence of the domain's running producer and a channel
// closed when the set next finishes reconciling or a retirement ends.
func (ps *producerSet) fence(domain string) (clockrt.ProducerFence, bool, <-chan struct{}) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	run, ok := ps.running[domain]
	if !ok {
		return clockrt.ProducerFence{}, false, ps.synced
	}
	return run.p.Fence(), true, ps.synced
}

// emit applies a report of this node's producer locally and hands it to
// peer delivery. ctx is the producer's: once it is retired, its reports
// are no longer handed on, and an OnProgress call it is blocked in is
// asked to return.
func (n *Node) emit(ctx context.Context, rep clockrt.ProgressReport) {
	if ctx.Err() != nil {
		return
	}
	if !n.lease.vouches() {
		// The node cannot prove it is still the authority: another may
		// have been committed on the far side of a cut (authorityLease).
		// The newest report is kept and handed on once the lease vouches
		// again, if its producer still runs by then: a paced domain with a
		// long period would otherwise show no tick until its next boundary.
		n.withheld.keep(ctx, rep)
		n.logger.Debug("tick withheld: the authority lease does not hold", "domain", rep.Domain, "tick", rep.ID)
		return
	}
	n.withheld.supersede(rep.Domain)
	if n.steps != nil && n.steps.look() && n.hasPeers() {
		// This node's UTC stepped forward and no peer has accepted a tick
		// of it since (stepWatch): the report goes to the peers alone,
		// which refuse it if it is ahead of real time, and nothing of it
		// reaches this node's clients.
		if n.cfg.OnProgress != nil {
			n.cfg.OnProgress(ctx, rep)
		}
		return
	}
	n.hand(ctx, rep, false)
}

// hasPeers reports whether another voter could confirm this node's clock.
// A member alone in its cluster has none and trusts its clock.
func (n *Node) hasPeers() bool {
	voters, err := n.catalog.Voters()
	return err != nil || len(voters) > 1
}

// ProgressAccepted records that peer accepted rep, a report of this node's
// producers: the peer found its authority reading plausible, which ends
// a suspicion of this node's clock after a forward step (stepWatch).
func (n *Node) ProgressAccepted(peer string, rep clockrt.ProgressReport) {
	if n.steps != nil {
		n.steps.confirm(rep.AuthorityUTC)
	}
}

// hand applies rep locally and hands it to OnProgress; with onlyNewer it
// hands on only a report the registry took as newer than the one it holds
// (a withheld report a later tick has overtaken is dropped).
func (n *Node) hand(ctx context.Context, rep clockrt.ProgressReport, onlyNewer bool) {
	newer, err := n.registry.AcceptProgress(n.cfg.Name, rep)
	if err != nil {
		// A producer being retired can still emit under its old fence;
		// the receiver's refusal is the fence doing its job.
		if errors.Is(err, clockrt.ErrProgressFence) || errors.Is(err, clockrt.ErrClockUnavailable) {
			n.logger.Debug("own progress refused", "domain", rep.Domain, "tick", rep.ID, "err", err)
		} else {
			n.logger.Warn("own progress refused", "domain", rep.Domain, "tick", rep.ID, "err", err)
		}
	}
	if onlyNewer && (err != nil || !newer) {
		return
	}
	if n.cfg.OnProgress != nil {
		n.cfg.OnProgress(ctx, rep)
	}
}

// releaseWithheld hands on every report emit withheld while the lease did
// not vouch whose producer still runs; the lease calls it after each
// sample that vouches. A report withheld again (the lease stopped vouching
// meanwhile) waits for the next.
func (n *Node) releaseWithheld() {
	for _, w := range n.withheld.takeAll() {
		if w.ctx.Err() != nil {
			continue // its producer was retired
		}
		if !n.lease.vouches() {
			n.withheld.keep(w.ctx, w.rep)
			continue
		}
		n.hand(w.ctx, w.rep, true)
	}
}

// withheldReports holds, per domain, the newest report emit withheld and
// its producer's context: at most one per running producer.
type withheldReports struct {
	count atomic.Int64 // len(m), so a vouching emit reads no lock
	mu    sync.Mutex
	m     map[string]withheldReport
}

type withheldReport struct {
	ctx context.Context
	rep clockrt.ProgressReport
}

func (w *withheldReports) keep(ctx context.Context, rep clockrt.ProgressReport) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[string]withheldReport)
	}
	w.m[rep.Domain] = withheldReport{ctx: ctx, rep: rep}
	w.count.Store(int64(len(w.m)))
}

// supersede drops the domain's withheld report: a newer one is being
// handed on.
func (w *withheldReports) supersede(domain string) {
	if w.count.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, domain)
	w.count.Store(int64(len(w.m)))
}

func (w *withheldReports) takeAll() []withheldReport {
	if w.count.Load() == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]withheldReport, 0, len(w.m))
	for _, r := range w.m {
		out = append(out, r)
	}
	clear(w.m)
	w.count.Store(0)
	return out
}

// Producing returns the fence of the domain's running tick producer on this
// node, and false when the node runs none for it. Producers follow
// installations asynchronously: right after an installation the previous
// producer may still be reported until its retirement begins, and a
// successor only once its predecessor exited. Once the node counts a
// revision as installed (Installed, the completion boundary), every
// producer it retires has exited.
func (n *Node) Producing(domain string) (clockrt.ProducerFence, bool) {
	f, ok, _ := n.producers.fence(domain)
	return f, ok
}

// settled reports whether the set has nothing to do: no reconciliation is
// due or under way, no retirement is under way, and every running
// producer is parked on its timer (clockrt.Producer.Parked). A wake the
// loop has taken but not yet acted on is seen too: whoever wakes the loop
// first names the domains it is to look at (pending), and the loop clears
// them in the same critical section as it starts their producers.
func (ps *producerSet) settled() bool {
	if len(ps.wakeC) > 0 {
		return false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.wakeC) > 0 || ps.pendingAll || len(ps.pending) > 0 || len(ps.retiring) > 0 {
		return false
	}
	for _, run := range ps.running {
		if !run.p.Parked() {
			return false
		}
	}
	return true
}
