package cluster

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/interconnect"
)

// maxInstalledWait bounds how long this node holds a peer's installed wait
// open before answering with the revision it has; the peer asks again
// while its statement's own bound lasts.
const maxInstalledWait = 15 * time.Second

// liveSignal is a broadcast of availability changes: wait takes the
// current channel, which the next change closes.
type liveSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *liveSignal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *liveSignal) changed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// awaitPeers is the node's completion boundary in a cluster
// (node.Config.AwaitPeers): it returns once every other live registered
// node has installed revision rev (as node.Node.Installed counts it: with
// every producer rev retires there exited), and otherwise, when ctx ends,
// the sorted names of those that had not. It keeps the peers' installed streams open
// (InstalledWatch.Want); a peer whose stream is up under its registered
// incarnation is waited on through what the stream pushes
// (InstalledWatch), which costs no request; any other peer is asked once
// through the installed route, which answers the moment the peer installs,
// and a request that fails is asked again after forwardRetry. A peer whose
// stream goes down mid-wait is asked from then on, and one asked whose
// stream comes up answers through either. A peer that is not live, or
// stops being live (a paused or partitioned node, once availability says
// so), does not hold the statement, and is named unless it last advertised
// rev.
func (m *Member) awaitPeers(ctx context.Context, rev uint64) []string {
	type waiter struct {
		peer   interconnect.Peer
		cancel context.CancelFunc // nil until the peer is asked
	}
	m.watch.Want()
	ctx, cancelAll := context.WithCancel(ctx)
	done := make(chan string)
	pending := make(map[string]*waiter)
	var wg sync.WaitGroup
	defer func() {
		cancelAll() // before the wait: an asker that got its answer may be offering it on done
		wg.Wait()
	}()
	var gaveUp []string
	for _, p := range m.peers() {
		switch {
		case p.Advertised >= rev:
			continue
		case !p.Live:
			gaveUp = append(gaveUp, p.Name) // does not hold the statement, but is named
			continue
		}
		pending[p.Name] = &waiter{peer: p}
	}
	ask := func(w *waiter) {
		pctx, cancel := context.WithCancel(ctx)
		w.cancel = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m.awaitPeer(pctx, w.peer.APIAddr, rev) {
				select {
				case done <- w.peer.Name:
				case <-ctx.Done():
				}
			}
		}()
	}
	finish := func(name string) {
		if w := pending[name]; w.cancel != nil {
			w.cancel()
		}
		delete(pending, name)
	}
	for len(pending) > 0 {
		changed, pushed := m.live.wait(), m.watch.Changed()
		for name, w := range pending {
			switch st := m.watch.Installed(name); {
			case st.Up && st.Incarnation == w.peer.Incarnation:
				if st.Revision >= rev {
					finish(name)
				}
			case w.cancel == nil:
				ask(w)
			}
		}
		if len(pending) == 0 {
			break
		}
		live := make(map[string]bool, len(pending))
		for _, p := range m.peers() {
			if w, ok := pending[p.Name]; ok {
				live[p.Name] = p.Live && p.Incarnation == w.peer.Incarnation
			}
		}
		for name := range pending {
			if !live[name] {
				finish(name)
				gaveUp = append(gaveUp, name)
			}
		}
		if len(pending) == 0 {
			break
		}
		select {
		case name := <-done:
			if _, ok := pending[name]; ok {
				finish(name)
			}
		case <-changed:
		case <-pushed:
		case <-ctx.Done():
			for name := range pending {
				finish(name)
				gaveUp = append(gaveUp, name)
			}
		}
	}
	if len(gaveUp) > 0 {
		slices.Sort(gaveUp)
		m.logger.Warn("statement returned before every live node installed its revision", "revision", rev, "nodes", gaveUp)
	}
	return gaveUp
}

// awaitPeer asks the node at addr until it answers that it installed rev;
// false when ctx ends first.
func (m *Member) awaitPeer(ctx context.Context, addr string, rev uint64) bool {
	for {
		reply, err := m.client.Installed(ctx, addr, rev)
		switch {
		case err == nil && reply.Installed:
			return true
		case ctx.Err() != nil:
			return false
		case err == nil:
			continue // the peer's own bound ended its wait: ask again
		}
		m.logger.Debug("installed wait failed; asking again", "addr", addr, "revision", rev, "err", err)
		if !timesource.Sleep(ctx, m.src, forwardRetry, m.ctx.Done()) {
			return false
		}
	}
}

// WaitInstalled serves a peer's installed wait, for at most
// maxInstalledWait.
func (b backend) WaitInstalled(ctx context.Context, rev uint64) (uint64, error) {
	n, err := b.m.opened()
	if err != nil {
		return 0, err
	}
	ctx, stop := timesource.WithTimeout(ctx, b.m.src, maxInstalledWait)
	defer stop()
	_ = n.WaitInstalledRevision(ctx, rev) // ends installed or with ctx: the reply says which
	return n.AdvertisedRevision(), nil
}
