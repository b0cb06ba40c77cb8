package interconnect

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// peerView is a changeable Peers for a watch.
type peerView struct {
	mu    sync.Mutex
	peers []Peer
}

func (v *peerView) get() []Peer {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Peer(nil), v.peers...)
}

func (v *peerView) set(peers ...Peer) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.peers = peers
}

// waitInstalled waits, on the watch's change signal, until peer's state
// satisfies cond.
func waitInstalled(t *testing.T, w *InstalledWatch, peer, what string, cond func(PeerInstalled) bool) {
	t.Helper()
	bound := time.NewTimer(10 * time.Second)
	defer bound.Stop()
	for {
		changed := w.Changed()
		st := w.Installed(peer)
		if cond(st) {
			return
		}
		select {
		case <-changed:
		case <-bound.C:
			t.Fatalf("%s: %s is %+v", what, peer, st)
		}
	}
}

func upAt(rev uint64) func(PeerInstalled) bool {
	return func(st PeerInstalled) bool { return st.Up && st.Incarnation == 11 && st.Revision == rev }
}

func down(st PeerInstalled) bool { return !st.Up }

// testBackoff is the watch tests' own backoff between two streams.
const testBackoff = 200 * time.Millisecond

// The watch follows a live peer's stream, notices when the stream ends
// and opens it again after its backoff, and stops following a peer that
// is no longer live.
func TestInstalledWatchFollowsReconnectsAndStops(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	srv := serve(t, p, NewHandler(rcv, nil, nil).WithStreamClock(timesource.NewFake(issued.UnixNano()), time.Second))
	src := timesource.NewFake(issued.UnixNano())
	view := &peerView{}
	view.set(Peer{Name: "n2", APIAddr: addrOf(srv), Incarnation: 11, Live: true})
	w := NewInstalledWatch(InstalledWatchConfig{Client: clientFor(t, p.n1), Source: src, Peers: view.get, Backoff: testBackoff})
	defer w.Close()
	w.PeersChanged()
	require.Equal(t, PeerInstalled{}, w.Installed("n2"), "no stream before the first Want")

	w.Want()
	waitInstalled(t, w, "n2", "the stream opened", upAt(5))
	rcv.advance(8)
	waitInstalled(t, w, "n2", "the pushed revision", upAt(8))

	srv.CloseClientConnections()
	waitInstalled(t, w, "n2", "the stream ended with its connection", down)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, src.BlockUntil(ctx, 2), "the linger and the backoff are armed")
	rcv.advance(9)
	src.Advance(testBackoff)
	waitInstalled(t, w, "n2", "the stream opened again after the backoff", upAt(9))

	view.set(Peer{Name: "n2", APIAddr: addrOf(srv), Incarnation: 11, Live: false})
	w.PeersChanged()
	require.Equal(t, PeerInstalled{}, w.Installed("n2"), "a peer that is not live is not followed")
}

// A stream that sends nothing for the idle timeout (its sender's
// heartbeat never comes) is taken for dead.
func TestInstalledWatchEndsAQuietStream(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	// The sender's heartbeat clock never advances: after its first line
	// the stream stays quiet.
	srv := serve(t, p, NewHandler(rcv, nil, nil).WithStreamClock(timesource.NewFake(issued.UnixNano()), time.Second))
	src := timesource.NewFake(issued.UnixNano())
	const idle = 3 * time.Second
	w := NewInstalledWatch(InstalledWatchConfig{Client: clientFor(t, p.n1), Source: src, Backoff: time.Hour, IdleTimeout: idle,
		Peers: func() []Peer { return []Peer{{Name: "n2", APIAddr: addrOf(srv), Incarnation: 11, Live: true}} }})
	defer w.Close()
	w.Want()
	waitInstalled(t, w, "n2", "the stream opened", upAt(5))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, src.BlockUntil(ctx, 2), "the linger and the idle check are armed")
	armed := src.Armings()
	src.Advance(idle) // the first line came within this period
	require.NoError(t, src.BlockUntilArmings(ctx, armed+1))
	require.True(t, w.Installed("n2").Up, "a stream that sent a line in the last period is up")
	src.Advance(idle)
	waitInstalled(t, w, "n2", "the quiet stream ended", down)
}

// The streams stay open for Linger after the latest Want, and close once
// it passes without one.
func TestInstalledWatchLingersAfterTheLastWant(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	srv := serve(t, p, NewHandler(rcv, nil, nil).WithStreamClock(timesource.NewFake(issued.UnixNano()), time.Second))
	src := timesource.NewFake(issued.UnixNano())
	const linger = 10 * time.Second
	w := NewInstalledWatch(InstalledWatchConfig{Client: clientFor(t, p.n1), Source: src, Linger: linger, IdleTimeout: time.Hour,
		Peers: func() []Peer { return []Peer{{Name: "n2", APIAddr: addrOf(srv), Incarnation: 11, Live: true}} }})
	defer w.Close()
	w.Want()
	waitInstalled(t, w, "n2", "the stream opened", upAt(5))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, src.BlockUntil(ctx, 2), "the linger and the idle check are armed")

	src.Advance(6 * time.Second)
	w.Want() // 6 s in: the streams now stay until 16 s
	armed := src.Armings()
	src.Advance(4 * time.Second)
	require.NoError(t, src.BlockUntilArmings(ctx, armed+1), "the linger re-armed for the rest")
	require.True(t, w.Installed("n2").Up, "a Want within the linger holds the stream open")

	src.Advance(6 * time.Second)
	waitInstalled(t, w, "n2", "the stream closed a linger after the last Want", down)
	w.PeersChanged()
	require.False(t, w.Installed("n2").Up, "PeersChanged does not reopen a lingered-out watch")
	w.Want()
	waitInstalled(t, w, "n2", "a Want opens the streams again", upAt(5))
}
