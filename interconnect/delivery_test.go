package interconnect

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// gate sits in front of a receiver's handler and plays a stalled or dead
// peer: it can fail requests (503) or hold them until their context ends.
type gate struct {
	next http.Handler

	mu       sync.Mutex
	mode     string // "open", "fail" or "hang"
	inflight int
	max      int
	requests int
}

func (g *gate) set(mode string) {
	g.mu.Lock()
	g.mode = mode
	g.mu.Unlock()
}

func (g *gate) stats() (inflight, max, requests int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight, g.max, g.requests
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.inflight++
	g.requests++
	g.max = max(g.max, g.inflight)
	mode, next := g.mode, g.next
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inflight--
		g.mu.Unlock()
	}()
	switch mode {
	case "fail":
		http.Error(w, "stalled", http.StatusServiceUnavailable)
	case "hang":
		<-r.Context().Done()
	default:
		next.ServeHTTP(w, r)
	}
}

// deliveryRig is one authority (n1) delivering to one receiver (n2).
type deliveryRig struct {
	rcv     *receiver
	gate    *gate
	fake    *timesource.Fake
	d       *Delivery
	metrics *Metrics
	live    atomic.Bool
	adv     atomic.Uint64
	peers   atomic.Bool // whether n2 is a target at all
	current atomic.Bool // whether the producer's fence is still installed
	addr    string
	// incarnation is n2's incarnation in the peer view.
	incarnation atomic.Uint64
	// viewReads counts the calls of the delivery's Peers: a lane reads the
	// view each time it evaluates its peer.
	viewReads atomic.Int64
	// hideRead, when not zero, is the number of the view read (counted by
	// viewReads) that omits n2, as a view briefly missing a peer does.
	hideRead atomic.Int64
}

// syncs returns how many domains' lanes the delivery has synced with the
// view.
func (r *deliveryRig) syncs() uint64 {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	return r.d.syncs
}

// lanes returns how many lanes the delivery holds for the rig's domains.
func (r *deliveryRig) lanes() int {
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	n := 0
	for _, dd := range r.d.domains {
		n += len(dd.lanes)
	}
	return n
}

// resetReceiver replaces the rig's receiver behind its gate with a fresh
// one, as a restarted peer process has.
func resetReceiver(t *testing.T, r *deliveryRig) *receiver {
	t.Helper()
	rcv := newReceiver(t)
	r.gate.mu.Lock()
	r.gate.next = NewHandler(rcv, nil, nil)
	r.gate.mu.Unlock()
	return rcv
}

// The specification's figures for progress delivery ("Each request has a
// two-second physical deadline. Failure waits on a 200-millisecond physical
// backoff"): the tests assert them, not the package's Default* constants.
const (
	specRequestDeadline = 2 * time.Second
	specBackoff         = 200 * time.Millisecond
)

// newRig builds the delivery the way a cluster member does, with no
// request deadline, backoff or subquota of its own: the defaults are what
// the tests see. The fake clock decides when a request's deadline and a
// backoff end.
func newRig(t *testing.T) *deliveryRig {
	t.Helper()
	p := newPKI(t)
	r := &deliveryRig{rcv: newReceiver(t), fake: timesource.NewFake(issued.UnixNano()), metrics: &Metrics{}}
	r.gate = &gate{next: NewHandler(r.rcv, nil, nil), mode: "open"}
	r.addr = addrOf(serve(t, p, r.gate))
	r.live.Store(true)
	r.adv.Store(5)
	r.peers.Store(true)
	r.current.Store(true)
	r.incarnation.Store(11)
	r.d = NewDelivery(DeliveryConfig{
		Client: clientFor(t, p.n1),
		Source: r.fake,
		Peers: func() []Peer {
			read := r.viewReads.Add(1)
			if !r.peers.Load() || read == r.hideRead.Load() {
				return nil
			}
			return []Peer{{Name: "n2", APIAddr: r.addr, Incarnation: r.incarnation.Load(), Live: r.live.Load(), Advertised: r.adv.Load()}}
		},
		Required: func(clockrt.ProgressReport) (uint64, bool) { return 5, r.current.Load() },
		Metrics:  r.metrics,
	})
	t.Cleanup(r.d.Close)
	return r
}

// waitFor polls a condition the delivery goroutines will reach; it bounds
// the wait rather than sleeping for time to pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func ids(reps []clockrt.ProgressReport) []uint64 {
	out := make([]uint64, len(reps))
	for i, r := range reps {
		out[i] = r.ID
	}
	return out
}

// TestStalledPeerReceivesOnlyTheNewestReport: a failed request backs off
// for the default 200 ms, and the report sent after it is the newest one,
// not the backlog published meanwhile.
func TestStalledPeerReceivesOnlyTheNewestReport(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.gate.set("fail")
	r.d.Publish(report(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.fake.BlockUntilDue(ctx, specBackoff), "the failed request armed the 200 ms backoff")
	for id := uint64(2); id <= 9; id++ {
		r.d.Publish(report(id)) // replaces the pending report
	}
	r.gate.set("open")
	r.fake.Advance(specBackoff - 1)
	_, _, requests := r.gate.stats()
	require.Equal(t, 1, requests, "nothing is sent before the backoff ends")
	r.fake.Advance(1)
	waitFor(t, "the newest report", func() bool { return len(r.rcv.seen()) == 1 })
	r.d.Publish(report(10))
	waitFor(t, "the next report", func() bool { return len(r.rcv.seen()) == 2 })
	require.Equal(t, []uint64{9, 10}, ids(r.rcv.seen()), "the returning peer got the newest report, not the backlog")
	require.Equal(t, uint64(10), r.rcv.reg.Progress("d").ID)
	waitFor(t, "both replies", func() bool { return r.metrics.Snapshot().ProgressSent == 2 })
	require.Equal(t, uint64(1), r.metrics.Snapshot().ProgressFailed)
}

// TestOneRequestInFlightUnderItsDeadline holds one request in flight per
// peer and domain, its default two-second deadline and the default 200 ms
// backoff after it, all on the node's clock: the request a hung peer holds
// ends exactly 2 s after it was sent, and the newest report goes out
// exactly 200 ms after that.
func TestOneRequestInFlightUnderItsDeadline(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.gate.set("hang")
	r.d.Publish(report(1))
	waitFor(t, "the first request", func() bool { in, _, _ := r.gate.stats(); return in == 1 })
	for id := uint64(2); id <= 50; id++ {
		r.d.Publish(report(id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The request's deadline is the one timer armed.
	require.NoError(t, r.fake.BlockUntil(ctx, 1))
	deadline, _ := r.fake.Next()
	require.Equal(t, specRequestDeadline, deadline, "a progress request has a two-second deadline")
	r.fake.Advance(specRequestDeadline - 1)
	in, most, requests := r.gate.stats()
	require.Equal(t, 1, in, "the request is still in flight just before its deadline")
	require.Equal(t, 1, most, "one request in flight per peer and domain")
	require.Equal(t, 1, requests)
	require.Zero(t, r.metrics.Snapshot().ProgressFailed)

	// At the deadline the request ends; the lane then backs off.
	r.fake.Advance(1)
	waitFor(t, "the request to end at its deadline", func() bool { return r.metrics.Snapshot().ProgressFailed == 1 })
	require.NoError(t, r.fake.BlockUntil(ctx, 1))
	backoff, _ := r.fake.Next()
	require.Equal(t, specBackoff, backoff, "a failed request backs off 200 ms")
	r.gate.set("open")
	r.fake.Advance(specBackoff - 1)
	_, _, requests = r.gate.stats()
	require.Equal(t, 1, requests, "nothing is sent before the backoff ends")
	r.fake.Advance(1)
	waitFor(t, "the newest report", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{50}, ids(r.rcv.seen()))
	_, most, _ = r.gate.stats()
	require.Equal(t, 1, most, "one request in flight per peer and domain")
}

// TestDeliveryWaitsForALiveAdvertisingPeer holds the delivery targets: a
// peer receives nothing while it is not live, nothing while it advertises a
// revision older than the one the producer started from (5), and the newest
// report once it advertises that revision. Each step waits until the lane
// has evaluated the changed view, so a lane that sent to the peer at that
// step would be seen.
func TestDeliveryWaitsForALiveAdvertisingPeer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.peers.Store(false)
	r.d.Publish(report(1)) // retained; n2 is no target yet
	// evaluated makes the change and waits until the view was read twice
	// since: once by PeersChanged, once by the lane it woke.
	evaluated := func(what string, change func()) {
		before := r.viewReads.Load()
		change()
		r.d.PeersChanged()
		waitFor(t, what, func() bool { return r.viewReads.Load() >= before+2 })
	}
	evaluated("the lane to find n2 not live", func() { r.live.Store(false); r.peers.Store(true) })
	evaluated("the lane to find n2 one revision short", func() { r.live.Store(true); r.adv.Store(4) })
	r.d.Publish(report(2))
	r.adv.Store(5)
	r.d.PeersChanged()
	waitFor(t, "a delivery", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{2}, ids(r.rcv.seen()))
	_, _, requests := r.gate.stats()
	require.Equal(t, 1, requests, "nothing went to a dead or lagging peer")
}

func TestNewPeerGetsTheNewestRetainedReport(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.peers.Store(false)
	for id := uint64(1); id <= 4; id++ {
		r.d.Publish(report(id))
	}
	r.peers.Store(true)
	r.d.PeersChanged()
	waitFor(t, "the retained report", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{4}, ids(r.rcv.seen()))
}

func TestRestartedPeerGetsTheNewestRetainedReportAgain(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.d.Publish(report(2))
	waitFor(t, "the reply", func() bool { return r.metrics.Snapshot().ProgressSent == 1 })
	require.Equal(t, uint64(2), r.rcv.reg.Progress("d").ID)
	const sent uint64 = 1

	// The same incarnation seen again is not a reconnection: nothing is
	// sent until the next tick.
	r.d.PeersChanged()
	// The peer restarts: a new incarnation, and none of the progress its
	// predecessor accepted.
	r.rcv = resetReceiver(t, r)
	r.incarnation.Store(12)
	r.d.PeersChanged()
	waitFor(t, "the retained report", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{2}, ids(r.rcv.seen()), "the restarted peer got the newest report without waiting for a tick")
	waitFor(t, "the reply", func() bool { return r.metrics.Snapshot().ProgressSent == sent+1 })
	require.Equal(t, sent+1, r.metrics.Snapshot().ProgressSent, "an unchanged incarnation was not sent the report again")
}

// The node retires a producer's delivery before it counts the revision
// that retired the producer: Retire cancels the fence's in-flight request
// or backoff and returns only once the lane has returned, and leaves a
// delivery under another fence alone.
func TestRetiringTheAuthorityStopsInFlightAndBackoff(t *testing.T) {
	fence := clockrt.ProducerFence{Domain: "d", Generation: report(1).Generation, Authority: authority}
	other := fence
	other.Authority.Revision++
	cases := []struct {
		name string
		mode string // the gate's: the lane is in flight, or backing off
	}{
		{"in-flight request", "hang"},
		{"backoff", "fail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() { goleak.VerifyNone(t) })
			r := newRig(t)
			r.gate.set(tc.mode)
			r.d.Publish(report(1))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tc.mode == "hang" {
				waitFor(t, "the request", func() bool { in, _, _ := r.gate.stats(); return in == 1 })
			} else {
				require.NoError(t, r.fake.BlockUntilDue(ctx, specBackoff), "the failed request armed its backoff")
			}
			failed := r.metrics.Snapshot().ProgressFailed

			r.d.Retire(other)
			_, _, requests := r.gate.stats()
			require.Equal(t, 1, requests)
			require.Equal(t, 1, r.fake.Armed(), "another fence's retirement left the request's deadline or the backoff armed")

			r.d.Retire(fence)
			// Retire returned after the lane did: the cancelled request
			// has ended and been counted, its deadline is disarmed, and no
			// backoff follows.
			require.Zero(t, r.fake.Armed(), "no deadline or backoff after a retirement")
			if tc.mode == "hang" {
				require.Equal(t, failed+1, r.metrics.Snapshot().ProgressFailed, "the in-flight request ended before Retire returned")
			}
			r.gate.set("open")
			r.fake.Advance(specRequestDeadline + specBackoff)
			r.d.Retire(fence) // a second retirement has nothing left to wait for
			_, _, requests = r.gate.stats()
			require.Equal(t, 1, requests, "nothing was sent after the retirement")
			require.Empty(t, r.rcv.seen())
		})
	}
}

func TestANewFenceReplacesTheDomainsLanes(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.gate.set("hang")
	r.d.Publish(report(1))
	waitFor(t, "the request", func() bool { in, _, _ := r.gate.stats(); return in == 1 })
	next := report(2)
	next.Authority.Revision++
	r.d.Publish(next) // the old fence's in-flight request is cancelled
	waitFor(t, "a request of the new fence", func() bool { _, _, n := r.gate.stats(); return n == 2 })
	// The receiver sees the old request end once the stream's reset
	// reaches it, which may come just after the new request arrived.
	waitFor(t, "the old fence's request to end", func() bool { in, _, _ := r.gate.stats(); return in == 1 })
	_, _, n := r.gate.stats()
	require.Equal(t, 2, n, "no request beyond the new fence's one")
}

// The producer's failure report is its last, so delivery retains it: a
// peer that restarts afterwards learns of the failure without another
// report.
func TestRestartedPeerGetsTheRetainedFailureAgain(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.d.Publish(report(2))
	r.d.Publish(failureReport(2))
	waitFor(t, "the failure", func() bool { return r.rcv.reg.ClockFailure("d") != nil })

	r.rcv = resetReceiver(t, r)
	r.incarnation.Store(12)
	r.d.PeersChanged()
	waitFor(t, "the retained failure", func() bool { return r.rcv.reg.ClockFailure("d") != nil })
	require.Equal(t, failureReport(2).Failure, r.rcv.reg.ClockFailure("d"))
	require.Equal(t, uint64(2), r.rcv.reg.Progress("d").ID, "with the newest tick")
}

// TestAnUnchangedViewCostsOneRead: the members hand PeersChanged every
// installation, so a view whose peers and incarnations did not change
// must cost one read of it, not one per domain delivered.
func TestAnUnchangedViewCostsOneRead(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.gate.set("hang") // every lane ends up in flight or waiting for the subquota
	const domains = 100
	for i := range domains {
		rep := report(1)
		rep.Domain = fmt.Sprintf("d%03d", i)
		r.d.Publish(rep)
	}
	// Each Publish read the view once, and each lane once before it sent.
	waitFor(t, "every lane to read its peer", func() bool { return r.viewReads.Load() == 2*domains })
	waitFor(t, "the subquota to fill", func() bool { in, _, _ := r.gate.stats(); return in == DefaultMaxInFlight })
	r.d.PeersChanged() // the first call syncs every domain against the view
	for _, tc := range []struct {
		name   string
		change func()
	}{
		{"nothing changed", func() {}},
		{"only liveness changed", func() { r.live.Store(false) }},
		{"only the advertisement changed", func() { r.adv.Store(9) }},
	} {
		before, synced := r.viewReads.Load(), r.syncs()
		tc.change()
		r.d.PeersChanged()
		require.Equal(t, before+1, r.viewReads.Load(), tc.name)
		require.Equal(t, synced, r.syncs(), "%s: no domain's lanes were synced", tc.name)
	}
	// A restarted peer (a new incarnation) is a change: every domain's
	// lanes are synced, still from one read.
	before, synced := r.viewReads.Load(), r.syncs()
	r.incarnation.Add(1)
	r.d.PeersChanged()
	require.Equal(t, before+1, r.viewReads.Load())
	require.Equal(t, synced+domains, r.syncs())
	require.Equal(t, domains, r.lanes(), "every domain keeps its lane")
}

// TestALaneWhosePeerFlickersOutOfTheViewHoldsItsReport: a lane that reads
// the view while its peer is briefly missing from it, and is not removed
// (the peer did not leave), holds its report and delivers once it is
// woken again, rather than ending with its place kept.
func TestALaneWhosePeerFlickersOutOfTheViewHoldsItsReport(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	// The lane is made by PeersChanged, with one report put: it reads the
	// view once, finds n2 not live and waits, so the reads are counted
	// exactly (a lane made by Publish can be woken twice).
	r.peers.Store(false)
	r.d.Publish(report(1))
	r.live.Store(false)
	r.peers.Store(true)
	before := r.viewReads.Load()
	r.d.PeersChanged()
	waitFor(t, "the lane to find n2 not live", func() bool { return r.viewReads.Load() == before+2 })
	// n2 comes back; PeersChanged's read sees it, the lane's next read
	// misses it.
	r.hideRead.Store(before + 4)
	r.live.Store(true)
	r.d.PeersChanged()
	waitFor(t, "the lane's read that misses n2", func() bool { return r.viewReads.Load() >= before+4 })
	r.d.Publish(report(2))
	waitFor(t, "a delivery", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{2}, ids(r.rcv.seen()))
	require.Equal(t, 1, r.d.LanesRunning("d"))
}

// TestAnOlderReportDoesNotReplaceANewerOne: under one fence a late report
// (a tick withheld while the lease did not vouch, handed on after a newer
// one) is dropped, and the newest stays what a new peer is given.
func TestAnOlderReportDoesNotReplaceANewerOne(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	r := newRig(t)
	r.peers.Store(false)
	r.d.Publish(report(3))
	r.d.Publish(report(2))
	r.peers.Store(true)
	r.d.PeersChanged()
	waitFor(t, "the retained report", func() bool { return len(r.rcv.seen()) == 1 })
	require.Equal(t, []uint64{3}, ids(r.rcv.seen()))
}
