package interconnect

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Delivery defaults.
const (
	// DefaultRequestTimeout is the physical deadline of one progress
	// request.
	DefaultRequestTimeout = 2 * time.Second
	// DefaultBackoff is the physical wait after a failed request before
	// the newest report is sent.
	DefaultBackoff = 200 * time.Millisecond
	// DefaultMaxInFlight is the node-wide progress subquota: how many
	// progress requests may be in flight at once across all peers and
	// domains.
	DefaultMaxInFlight = 64
)

// Peer is one delivery target as the node's membership view sees it.
type Peer struct {
	Name    string
	APIAddr string
	// Incarnation is the peer's registered incarnation.
	Incarnation uint64
	// Live is the peer's effective availability.
	Live bool
	// Advertised is the runtime revision the peer last advertised (its
	// status), 0 when unknown.
	Advertised uint64
}

// DeliveryConfig configures a Delivery.
type DeliveryConfig struct {
	// Client sends the requests.
	Client *Client
	// Source arms the request deadlines and the backoff timers.
	Source timesource.Source
	// Peers returns the current targets, this node excluded. It is called
	// often and must not block.
	Peers func() []Peer
	// Required returns the runtime revision a target must advertise to
	// receive rep: the revision of the installation the producer started
	// from. false means rep's fence is no longer this node's installed
	// authority: the lane sends nothing more and waits for Retire.
	Required func(rep clockrt.ProgressReport) (uint64, bool)
	// RequestTimeout, Backoff and MaxInFlight default to the Default*
	// constants.
	RequestTimeout time.Duration
	Backoff        time.Duration
	MaxInFlight    int
	// Accepted, when set, is told of every report a peer did not refuse
	// (accepted as newest, or ignored as no newer than the one it holds:
	// either way it passed the peer's fence and plausibility checks), on
	// the lane's goroutine; it must not block.
	Accepted func(peer string, rep clockrt.ProgressReport)
	// Metrics counts sent and failed requests; nil counts nothing.
	Metrics *Metrics
	// Logger nil means slog.Default().
	Logger *slog.Logger
}

// Delivery is the clock authority's progress delivery: one lane per peer
// and domain, each with at most one request in flight and one replaceable
// pending report. All methods are safe for concurrent use; Publish never
// blocks, and Retire and Close wait only for the lanes they end, whose
// every wait also ends with their cancellation.
type Delivery struct {
	cfg  DeliveryConfig
	sem  chan struct{}
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	domains  map[string]*domainDelivery
	ending   map[endingKey]*domainDelivery // retired, with lanes still running
	replies  map[string]replyAdvert        // peer name → advertisement from its replies
	peersGen chan struct{}                 // closed and replaced when the peer view changes
	// members is the peers' names and incarnations as PeersChanged last
	// synced every domain's lanes to: a view that differs from it only in
	// liveness or advertisement wakes the lanes and syncs nothing, so an
	// unchanged membership costs one read of the view, not one per domain.
	members map[string]uint64
	// syncs counts the domains whose lanes were synced with the view, so
	// a test can hold an unchanged view to none.
	syncs uint64
}

// endingKey names a retired domain delivery: its domain and fence.
type endingKey struct {
	domain string
	fence  fenceKey
}

type replyAdvert struct {
	incarnation uint64
	revision    uint64
}

// domainDelivery is one domain's delivery under one fence.
type domainDelivery struct {
	fence  fenceKey
	newest clockrt.ProgressReport // retained for new and reconnected peers
	ctx    context.Context
	cancel context.CancelFunc
	lanes  map[string]*lane
	// running counts the lane goroutines that have not returned, and
	// ended is closed once the delivery is retired and running is 0;
	// both guarded by Delivery.mu.
	running int
	retired bool
	ended   chan struct{}
}

type fenceKey struct {
	generation  uint64
	node        string
	incarnation uint64
	revision    uint64
}

func fenceOf(rep clockrt.ProgressReport) fenceKey {
	return fenceKey{rep.Generation, rep.Authority.Node, rep.Authority.Incarnation, rep.Authority.Revision}
}

func fenceKeyOf(f clockrt.ProducerFence) fenceKey {
	return fenceKey{f.Generation, f.Authority.Node, f.Authority.Incarnation, f.Authority.Revision}
}

// lane is one peer and domain: one replaceable pending report, one
// goroutine that sends it.
type lane struct {
	peer string
	// incarnation is the peer incarnation the lane last saw in the peer
	// view; guarded by Delivery.mu. A restarted peer holds no progress,
	// so a change hands it the newest retained report again.
	incarnation uint64
	mu          sync.Mutex
	pending     *clockrt.ProgressReport
	wake        chan struct{} // one slot
}

func (l *lane) put(rep clockrt.ProgressReport) {
	l.mu.Lock()
	l.pending = &rep
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the pending report and clears the slot.
func (l *lane) take() (clockrt.ProgressReport, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		return clockrt.ProgressReport{}, false
	}
	rep := *l.pending
	l.pending = nil
	return rep, true
}

// restore puts rep back unless a newer report replaced it meanwhile.
func (l *lane) restore(rep clockrt.ProgressReport) {
	l.mu.Lock()
	if l.pending == nil {
		l.pending = &rep
	}
	l.mu.Unlock()
}

// NewDelivery returns a running delivery; Close stops it.
func NewDelivery(cfg DeliveryConfig) *Delivery {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Metrics == nil {
		cfg.Metrics = &Metrics{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Source == nil {
		cfg.Source = timesource.System()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Delivery{cfg: cfg, sem: make(chan struct{}, cfg.MaxInFlight), ctx: ctx, stop: stop,
		domains: make(map[string]*domainDelivery), ending: make(map[endingKey]*domainDelivery),
		replies: make(map[string]replyAdvert), peersGen: make(chan struct{})}
}

// Publish hands one report of this node's producer to every peer's lane
// of its domain, replacing a report still pending there. A report under a
// new fence retires the domain's lanes of the previous fence first
// (cancelling their in-flight requests and backoffs).
func (d *Delivery) Publish(rep clockrt.ProgressReport) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	dd := d.domains[rep.Domain]
	if dd != nil && dd.fence != fenceOf(rep) {
		d.retireLocked(rep.Domain)
		dd = nil
	}
	if dd == nil {
		ctx, cancel := context.WithCancel(d.ctx)
		dd = &domainDelivery{fence: fenceOf(rep), ctx: ctx, cancel: cancel, lanes: make(map[string]*lane), ended: make(chan struct{})}
		d.domains[rep.Domain] = dd
	}
	if rep.Failure == nil && rep.ID < dd.newest.ID {
		// Under one fence ticks only advance: an older report (a withheld
		// one handed on late) never replaces a newer one.
		return
	}
	dd.newest = rep
	d.syncLanesLocked(rep.Domain, dd, d.cfg.Peers())
	for _, l := range dd.lanes {
		l.put(rep)
	}
}

// syncLanesLocked starts a lane, seeded with the newest retained report,
// for every peer that has none, hands the newest retained report again to
// a peer that restarted under a new incarnation (it lost the progress it
// had accepted), and stops the lanes of peers that left; peers is the
// current view.
func (d *Delivery) syncLanesLocked(domain string, dd *domainDelivery, peers []Peer) {
	d.syncs++
	present := make(map[string]bool, len(peers))
	for _, p := range peers {
		present[p.Name] = true
		if l, ok := dd.lanes[p.Name]; ok {
			if l.incarnation != p.Incarnation {
				l.incarnation = p.Incarnation
				l.put(dd.newest)
			}
			continue
		}
		l := &lane{peer: p.Name, incarnation: p.Incarnation, wake: make(chan struct{}, 1)}
		lctx, lcancel := context.WithCancel(dd.ctx)
		dd.lanes[p.Name] = l
		l.put(dd.newest)
		dd.running++
		d.wg.Add(1)
		go d.run(lctx, lcancel, domain, dd, l)
	}
	for name, l := range dd.lanes {
		if !present[name] {
			delete(dd.lanes, name)
			l.mu.Lock()
			l.pending = nil
			l.mu.Unlock()
			// The lane's goroutine ends when it finds itself removed.
			select {
			case l.wake <- struct{}{}:
			default:
			}
		}
	}
}

// PeersChanged re-reads the peer view: lanes waiting for a peer to become
// live or advertise wake up and, when a peer joined, left or restarted
// since the previous call, new peers get the newest retained report of
// every domain and lanes of departed peers stop. A view whose names and
// incarnations did not change costs one read, whatever the number of
// domains: the members call it after every installation.
func (d *Delivery) PeersChanged() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if len(d.domains) == 0 {
		// Nothing to sync, and the view is not read: a member calls this
		// before its catalog opened. The next call syncs whatever the
		// lanes Publish makes meanwhile were made against.
		d.members = nil
	} else if peers := d.cfg.Peers(); !sameMembers(d.members, peers) {
		d.members = make(map[string]uint64, len(peers))
		for _, p := range peers {
			d.members[p.Name] = p.Incarnation
		}
		for name, dd := range d.domains {
			d.syncLanesLocked(name, dd, peers)
		}
	}
	close(d.peersGen)
	d.peersGen = make(chan struct{})
}

// sameMembers reports whether peers names exactly the peers and
// incarnations of members.
func sameMembers(members map[string]uint64, peers []Peer) bool {
	if members == nil || len(members) != len(peers) {
		return false
	}
	for _, p := range peers {
		if inc, ok := members[p.Name]; !ok || inc != p.Incarnation {
			return false
		}
	}
	return true
}

// Retire ends the delivery of the reports a retired producer emitted
// under fence: the lanes' in-flight requests and backoffs are cancelled and
// the retained report is dropped. It returns once every lane of that
// delivery has returned, so no request under fence is in flight from
// here afterwards; the node's producer set calls it after the producer
// exited and before it counts the revision that retired it. A delivery
// of the domain under another fence is left alone.
func (d *Delivery) Retire(fence clockrt.ProducerFence) {
	key := endingKey{fence.Domain, fenceKeyOf(fence)}
	d.mu.Lock()
	if dd, ok := d.domains[fence.Domain]; ok && dd.fence == key.fence {
		d.retireLocked(fence.Domain)
	}
	dd := d.ending[key]
	d.mu.Unlock()
	if dd != nil {
		<-dd.ended
	}
}

// LanesRunning returns how many lane goroutines of the domain's delivery
// have not returned, under its current fence and every retired one.
func (d *Delivery) LanesRunning(domain string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	if dd, ok := d.domains[domain]; ok {
		n += dd.running
	}
	for key, dd := range d.ending {
		if key.domain == domain {
			n += dd.running
		}
	}
	return n
}

// retireLocked cancels the domain's delivery and keeps it where Retire
// finds it until its lanes have returned.
func (d *Delivery) retireLocked(domain string) {
	dd, ok := d.domains[domain]
	if !ok {
		return
	}
	dd.cancel()
	delete(d.domains, domain)
	dd.retired = true
	if dd.running == 0 {
		close(dd.ended)
		return
	}
	d.ending[endingKey{domain, dd.fence}] = dd
}

// laneEnded counts one lane goroutine of dd out, and ends a retired
// delivery whose last lane it was.
func (d *Delivery) laneEnded(domain string, dd *domainDelivery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dd.running--
	if dd.running == 0 && dd.retired {
		close(dd.ended)
		key := endingKey{domain, dd.fence}
		if d.ending[key] == dd {
			delete(d.ending, key)
		}
	}
}

// Close stops every lane and waits for their goroutines.
func (d *Delivery) Close() {
	d.mu.Lock()
	d.closed = true
	d.domains = map[string]*domainDelivery{}
	d.mu.Unlock()
	d.stop()
	d.wg.Wait()
}

// target returns the peer's current view, its effective advertisement,
// whether it is still a target, and the channel closed on the next view
// change.
func (d *Delivery) target(name string) (Peer, bool, <-chan struct{}) {
	d.mu.Lock()
	gen := d.peersGen
	ra := d.replies[name]
	d.mu.Unlock()
	for _, p := range d.cfg.Peers() {
		if p.Name == name {
			if ra.incarnation == p.Incarnation && ra.revision > p.Advertised {
				p.Advertised = ra.revision
			}
			return p, true, gen
		}
	}
	return Peer{}, false, gen
}

func (d *Delivery) laneRemoved(domain string, l *lane) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	dd, ok := d.domains[domain]
	return !ok || dd.lanes[l.peer] != l
}

// run is one lane's goroutine.
func (d *Delivery) run(ctx context.Context, cancel context.CancelFunc, domain string, dd *domainDelivery, l *lane) {
	defer d.wg.Done()
	defer d.laneEnded(domain, dd)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		for {
			if d.laneRemoved(domain, l) {
				return
			}
			rep, ok := l.take()
			if !ok {
				break
			}
			required, current := d.cfg.Required(rep)
			if !current {
				break // the producer was retired; Retire (or a new fence's Publish) ends the lane
			}
			p, ok, changed := d.target(l.peer)
			if !ok {
				// Not in the view this read: the peer left, and the lane
				// is removed and woken once PeersChanged sees it (the
				// check above then ends it), or the view will name it
				// again. Either way the report is held, never dropped
				// with the lane left in place, which would leave the peer
				// without delivery for good.
				l.restore(rep)
				select {
				case <-ctx.Done():
					return
				case <-changed:
				case <-l.wake:
				}
				continue
			}
			if !p.Live || p.Advertised < required {
				// Hold the newest report until the peer is live and has
				// installed the revision the producer started from.
				l.restore(rep)
				select {
				case <-ctx.Done():
					return
				case <-changed:
				case <-l.wake:
				}
				continue
			}
			if !d.send(ctx, p, rep) {
				l.restore(rep)
				if !d.backoff(ctx) {
					return
				}
			}
		}
	}
}

// send makes one request under the node-wide subquota and the request
// deadline, and reports whether the peer answered.
func (d *Delivery) send(ctx context.Context, p Peer, rep clockrt.ProgressReport) bool {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-d.sem }()
	// The deadline is physical time on the node's source, like the
	// backoff, so that both are the node's clock and not the process's.
	rctx, cancel := timesource.WithTimeout(ctx, d.cfg.Source, d.cfg.RequestTimeout)
	defer cancel()
	reply, err := d.cfg.Client.Progress(rctx, p.APIAddr, rep)
	if err != nil {
		d.cfg.Metrics.ProgressFailed.Add(1)
		if ctx.Err() == nil {
			d.cfg.Logger.Debug("progress delivery failed; backing off", "peer", p.Name, "domain", rep.Domain, "tick", rep.ID, "err", err)
		}
		return false
	}
	d.cfg.Metrics.ProgressSent.Add(1)
	d.mu.Lock()
	d.replies[p.Name] = replyAdvert{incarnation: reply.Incarnation, revision: reply.AdvertisedRevision}
	d.mu.Unlock()
	if reply.Outcome != OutcomeRefused && d.cfg.Accepted != nil {
		d.cfg.Accepted(p.Name, rep)
	}
	return true
}

// backoff waits the physical backoff, or until ctx ends (false).
func (d *Delivery) backoff(ctx context.Context) bool {
	return timesource.Sleep(ctx, d.cfg.Source, d.cfg.Backoff, nil)
}
