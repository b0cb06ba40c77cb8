package interconnect

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// DefaultStreamLinger is how long a watch keeps following its peers'
// streams after the last Want.
const DefaultStreamLinger = time.Minute

// DefaultStreamIdleTimeout is how long a subscriber waits for any line of
// an installed stream before it takes the stream for dead and reconnects:
// three of the sender's heartbeats.
const DefaultStreamIdleTimeout = 3 * DefaultStreamHeartbeat

// InstalledWatchConfig configures an InstalledWatch.
type InstalledWatchConfig struct {
	// Client opens the streams.
	Client *Client
	// Source arms the backoff and idle timers.
	Source timesource.Source
	// Peers returns the members to follow, this node excluded; only live
	// ones are followed. It is called on PeersChanged and must not block.
	Peers func() []Peer
	// Backoff is the physical wait after a stream failed or ended before
	// the next attempt (DefaultBackoff when 0).
	Backoff time.Duration
	// IdleTimeout ends a stream that sent nothing for that long
	// (DefaultStreamIdleTimeout when 0). Idleness is checked once per
	// IdleTimeout, so a dead stream is noticed within twice it.
	IdleTimeout time.Duration
	// Linger is how long the streams stay open after the last Want
	// (DefaultStreamLinger when 0).
	Linger time.Duration
	// Logger nil means slog.Default().
	Logger *slog.Logger
}

// PeerInstalled is what a peer's installed stream last said. Up is false
// while no stream from the peer is open (not yet, or no longer): then
// Incarnation and Revision are 0 and say nothing.
type PeerInstalled struct {
	Up          bool
	Incarnation uint64
	Revision    uint64
}

// InstalledWatch holds one installed stream to every live peer and keeps
// each peer's newest installed revision in memory, so a completion
// boundary waits on what the peers pushed. It never waits for a stream
// itself: a caller whose peer is not Up asks the peer directly
// (Client.Installed).
//
// The streams are open while the node serves statements: the first Want
// opens them, and they close once Linger passes without one, because every
// peer pushes every installation to every follower of its stream, and on
// two cores the pushes nobody waits for slow the ones somebody does (in
// BenchmarkCommitLatency3Node, a leader statement took p50 206–217 µs
// with the idle follower not subscribing and 222–233 µs with it). Want
// costs one clock reading while the streams are open.
//
// Each stream is one goroutine reading it and one checking it for
// idleness, both stopped by PeersChanged (for a peer no longer live or
// registered), the linger, and Close; a stream that fails or ends is
// opened again after Backoff. All methods are safe for concurrent use.
type InstalledWatch struct {
	cfg  InstalledWatchConfig
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	lastWant atomic.Int64 // Source.Monotonic at the latest Want
	active   atomic.Bool  // the streams follow the peers: a Want within Linger

	mu      sync.Mutex
	closed  bool
	streams map[string]*watched // peer name → its stream
	changed chan struct{}       // closed and replaced when any PeerInstalled changes
}

// watched is one peer's stream; only the goroutine of the watched that is
// current in InstalledWatch.streams writes its state.
type watched struct {
	addr   string
	cancel context.CancelFunc
	state  PeerInstalled // guarded by InstalledWatch.mu
}

// NewInstalledWatch returns a running watch with no streams; PeersChanged
// opens them.
func NewInstalledWatch(cfg InstalledWatchConfig) *InstalledWatch {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultStreamIdleTimeout
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultStreamLinger
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Source == nil {
		cfg.Source = timesource.System()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &InstalledWatch{cfg: cfg, ctx: ctx, stop: stop, streams: make(map[string]*watched), changed: make(chan struct{})}
}

// Installed returns what peer's stream last said.
func (w *InstalledWatch) Installed(peer string) PeerInstalled {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.streams[peer]; ok {
		return s.state
	}
	return PeerInstalled{}
}

// Changed returns a channel closed at the next change of any peer's
// PeerInstalled. Take it before reading the states a wait depends on: a
// change after the call closes it.
func (w *InstalledWatch) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// Want says that the node waits on its peers' installed revisions: it
// opens the streams unless they are open, and holds them open for Linger
// from now.
func (w *InstalledWatch) Want() {
	w.lastWant.Store(int64(w.cfg.Source.Monotonic()))
	if w.active.Load() {
		return
	}
	w.mu.Lock()
	if w.closed || w.active.Load() {
		w.mu.Unlock()
		return
	}
	w.active.Store(true)
	w.wg.Add(1)
	go w.linger()
	w.mu.Unlock()
	w.PeersChanged()
}

// linger closes the streams once Linger passed without a Want.
func (w *InstalledWatch) linger() {
	defer w.wg.Done()
	t := w.cfg.Source.NewTimer(w.cfg.Linger)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C():
		}
		quiet := w.cfg.Source.Monotonic() - time.Duration(w.lastWant.Load())
		if quiet < w.cfg.Linger {
			t.Reset(w.cfg.Linger - quiet)
			continue
		}
		w.mu.Lock()
		w.active.Store(false)
		w.stopLocked(nil)
		w.mu.Unlock()
		return
	}
}

// stopLocked stops the stream of every peer that want does not name at
// its address.
func (w *InstalledWatch) stopLocked(want map[string]string) {
	for name, s := range w.streams {
		if addr, ok := want[name]; !ok || addr != s.addr {
			s.cancel()
			delete(w.streams, name)
			w.signalLocked()
		}
	}
}

// PeersChanged re-reads the peers while the streams are open (see Want):
// a stream opens to every live peer that has none (or moved its address),
// and the streams of peers that are no longer live or registered stop.
func (w *InstalledWatch) PeersChanged() {
	if !w.active.Load() {
		return
	}
	peers := w.cfg.Peers()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.active.Load() {
		return
	}
	want := make(map[string]string, len(peers))
	for _, p := range peers {
		if p.Live {
			want[p.Name] = p.APIAddr
		}
	}
	w.stopLocked(want)
	for name, addr := range want {
		if _, ok := w.streams[name]; ok {
			continue
		}
		ctx, cancel := context.WithCancel(w.ctx)
		s := &watched{addr: addr, cancel: cancel}
		w.streams[name] = s
		w.wg.Add(1)
		go w.run(ctx, name, s)
	}
}

// Close stops every stream and waits for their goroutines.
func (w *InstalledWatch) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.stop()
	w.wg.Wait()
}

// set records what s's stream says of peer, if s is still peer's stream.
func (w *InstalledWatch) set(peer string, s *watched, st PeerInstalled) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.streams[peer] != s || s.state == st {
		return
	}
	s.state = st
	w.signalLocked()
}

func (w *InstalledWatch) signalLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// run is one peer's stream goroutine: it follows the stream, and opens it
// again after Backoff whenever it ends, until ctx ends.
func (w *InstalledWatch) run(ctx context.Context, peer string, s *watched) {
	defer w.wg.Done()
	for {
		w.follow(ctx, peer, s)
		w.set(peer, s, PeerInstalled{})
		if !timesource.Sleep(ctx, w.cfg.Source, w.cfg.Backoff, nil) {
			return
		}
	}
}

// follow opens one stream to peer and records every update until the
// stream fails, goes idle for IdleTimeout or ctx ends.
func (w *InstalledWatch) follow(ctx context.Context, peer string, s *watched) {
	ctx, cancel := context.WithCancel(ctx)
	var idle sync.WaitGroup
	defer idle.Wait()
	defer cancel()
	st, err := w.cfg.Client.InstalledStream(ctx, s.addr)
	if err != nil {
		if ctx.Err() == nil {
			w.cfg.Logger.Debug("installed stream did not open; trying again", "peer", peer, "err", err)
		}
		return
	}
	defer st.Close()
	var lines atomic.Uint64
	idle.Add(1)
	go func() {
		defer idle.Done()
		t := w.cfg.Source.NewTimer(w.cfg.IdleTimeout)
		defer t.Stop()
		for seen := uint64(0); ; {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			if n := lines.Load(); n != seen {
				seen = n
				t.Reset(w.cfg.IdleTimeout)
				continue
			}
			w.cfg.Logger.Debug("installed stream went quiet; opening it again", "peer", peer, "idle_timeout", w.cfg.IdleTimeout)
			cancel()
			return
		}
	}()
	for {
		u, err := st.Next()
		if err != nil {
			if ctx.Err() == nil {
				w.cfg.Logger.Debug("installed stream ended; opening it again", "peer", peer, "err", err)
			}
			return
		}
		lines.Add(1)
		w.set(peer, s, PeerInstalled{Up: true, Incarnation: u.Incarnation, Revision: u.Revision})
	}
}
