// Package faultnet is a network the tests control: every connection a
// participant dials through its Dialer runs through an in-process proxy of
// the link between the dialling participant and the one that listens at the
// address, and the test cuts, delays, resets and heals each link, one
// direction at a time.
//
// A cut link behaves as a network that drops every packet: bytes written
// across it stall (TCP would retransmit them) and are delivered once the
// link heals, unless the connection is closed first, and a new connection
// across it does not complete until the link heals or the dial's context
// ends. A reset link refuses new connections at once and resets the ones it
// carries, as a peer that sends RST does. A delayed link holds every chunk
// of bytes for its delay (plus a random jitter) before passing it on.
//
// It is for tests only and must never be imported by production code. Its
// proxies arm their delays on the network's time source: the real clock
// (New), as the members whose traffic they carry run on, or one a test
// drives (NewWithTime). Every proxy goroutine belongs to the Network and
// ends by Close.
package faultnet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// ErrLinkReset is the error of a dial across a link that was reset.
var ErrLinkReset = errors.New("faultnet: connection refused: the link is reset")

// ErrClosed is the error of a dial through a closed Network.
var ErrClosed = errors.New("faultnet: the network is closed")

// link is one direction between two participants.
type link struct{ from, to string }

// rule is the state of one direction of one link.
type rule struct {
	cut    bool
	reset  bool
	delay  time.Duration
	jitter time.Duration
}

// Network is the set of links between named participants. All methods are
// safe for concurrent use.
type Network struct {
	mu     sync.Mutex
	owners map[string]string // listening address → participant name
	rules  map[link]rule
	healed chan struct{} // closed and replaced whenever a rule changes
	conns  map[*proxied]struct{}
	src    timesource.Source // arms the delays
	closed bool
	wg     sync.WaitGroup
}

// New returns a network whose links all pass traffic unchanged, whose
// delays run on the real clock.
func New() *Network { return NewWithTime(timesource.System()) }

// NewWithTime is New with the delays armed on src, so a test that drives a
// timesource.Fake releases delayed bytes by advancing it.
func NewWithTime(src timesource.Source) *Network {
	return &Network{owners: make(map[string]string), rules: make(map[link]rule),
		healed: make(chan struct{}), conns: make(map[*proxied]struct{}), src: src}
}

// Register records that participant name listens at each of addrs, so
// that a dial of one of them is a connection to name.
func (n *Network) Register(name string, addrs ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range addrs {
		n.owners[a] = name
	}
}

// Dialer returns the dial function of participant from: it connects to the
// address and runs the connection through the proxy of the link from the
// participant registered there. An address nobody registered is dialled
// directly, with no faults.
func (n *Network) Dialer(from string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return n.dial(ctx, from, network, addr)
	}
}

func (n *Network) dial(ctx context.Context, from, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	to, known := n.owners[addr]
	n.mu.Unlock()
	var d net.Dialer
	if !known {
		return d.DialContext(ctx, network, addr)
	}
	// The connection is set up only once both directions pass: a lost
	// SYN or SYN-ACK leaves the dialler waiting.
	for {
		fwd, back, changed, closed := n.state(link{from, to}, link{to, from})
		switch {
		case closed:
			return nil, ErrClosed
		case fwd.reset || back.reset:
			return nil, fmt.Errorf("dial %s (%s→%s): %w", addr, from, to, ErrLinkReset)
		case !fwd.cut && !back.cut:
			raw, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return n.proxy(raw, link{from, to})
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("dial %s (%s→%s): the link is cut: %w", addr, from, to, ctx.Err())
		case <-changed:
		}
	}
}

// state returns the rules of two directions, a channel closed at the next
// change of any rule, and whether the network is closed.
func (n *Network) state(a, b link) (rule, rule, <-chan struct{}, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rules[a], n.rules[b], n.healed, n.closed
}

// update applies change to the rule of every direction in links, resets
// the connections a reset direction carries, and wakes every stalled
// proxy.
func (n *Network) update(links []link, change func(*rule)) {
	n.mu.Lock()
	for _, l := range links {
		r := n.rules[l]
		change(&r)
		if r == (rule{}) {
			delete(n.rules, l)
		} else {
			n.rules[l] = r
		}
	}
	var doomed []*proxied
	for p := range n.conns {
		if n.rules[p.link].reset || n.rules[link{p.link.to, p.link.from}].reset {
			doomed = append(doomed, p)
		}
	}
	close(n.healed)
	n.healed = make(chan struct{})
	n.mu.Unlock()
	for _, p := range doomed {
		p.close()
	}
}

// Cut stops the traffic from participant from to participant to (one way):
// the bytes stall until Heal.
func (n *Network) Cut(from, to string) {
	n.update([]link{{from, to}}, func(r *rule) { r.cut = true })
}

// Partition cuts every link between a member of a and a member of b, both
// ways; links within each side keep working.
func (n *Network) Partition(a, b []string) {
	var links []link
	for _, x := range a {
		for _, y := range b {
			links = append(links, link{x, y}, link{y, x})
		}
	}
	n.update(links, func(r *rule) { r.cut = true })
}

// Isolate cuts every link between name and each of others, both ways.
func (n *Network) Isolate(name string, others ...string) {
	n.Partition([]string{name}, slices.DeleteFunc(slices.Clone(others), func(o string) bool { return o == name }))
}

// Reset refuses new connections between from and to (both ways) and
// resets the ones open, until Heal.
func (n *Network) Reset(from, to string) {
	n.update([]link{{from, to}, {to, from}}, func(r *rule) { r.reset = true })
}

// Delay holds every chunk from participant from to participant to for d
// plus a uniformly random jitter below jitter.
func (n *Network) Delay(from, to string, d, jitter time.Duration) {
	n.update([]link{{from, to}}, func(r *rule) { r.delay, r.jitter = d, jitter })
}

// Heal clears every cut, reset and delay; stalled bytes flow on.
func (n *Network) Heal() {
	n.mu.Lock()
	n.rules = make(map[link]rule)
	close(n.healed)
	n.healed = make(chan struct{})
	n.mu.Unlock()
}

// Close closes every proxied connection and waits for the proxies; later
// dials fail with ErrClosed. It is safe to call more than once.
func (n *Network) Close() {
	n.mu.Lock()
	n.closed = true
	conns := make([]*proxied, 0, len(n.conns))
	for p := range n.conns {
		conns = append(conns, p)
	}
	close(n.healed)
	n.healed = make(chan struct{})
	n.mu.Unlock()
	for _, p := range conns {
		p.close()
	}
	n.wg.Wait()
}

// proxied is one connection through a link: the dialler holds one end of
// a pipe, and two pumps carry the bytes between its other end and the real
// connection, each obeying the rule of its direction.
type proxied struct {
	link      link
	local     net.Conn // the proxy's end of the pipe
	raw       net.Conn
	gone      chan struct{} // closed by close
	closeOnce sync.Once
}

func (p *proxied) close() {
	p.closeOnce.Do(func() {
		close(p.gone)
		_ = p.local.Close()
		_ = p.raw.Close()
	})
}

// proxy returns the dialler's end of a proxied connection over raw.
func (n *Network) proxy(raw net.Conn, l link) (net.Conn, error) {
	app, local := net.Pipe()
	p := &proxied{link: l, local: local, raw: raw, gone: make(chan struct{})}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = raw.Close()
		_ = app.Close()
		_ = local.Close()
		return nil, ErrClosed
	}
	n.conns[p] = struct{}{}
	n.wg.Add(2)
	n.mu.Unlock()
	done := make(chan struct{}, 2)
	pump := func(dst, src net.Conn, dir link) {
		defer n.wg.Done()
		defer func() { done <- struct{}{} }()
		n.pump(p, dst, src, dir)
	}
	go pump(raw, local, l)                  // the dialler's bytes to the listener
	go pump(local, raw, link{l.to, l.from}) // the listener's bytes back
	go func() {                             // owned: ends when both pumps have
		<-done
		p.close()
		<-done
		n.mu.Lock()
		delete(n.conns, p)
		n.mu.Unlock()
	}()
	return &addrConn{Conn: app, local: raw.LocalAddr(), remote: raw.RemoteAddr()}, nil
}

// pump copies src to dst chunk by chunk, holding each chunk while dir is
// cut and for dir's delay, until either side fails or closes.
func (n *Network) pump(p *proxied, dst, src net.Conn, dir link) {
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if !n.pass(p, dir) {
				return
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pass waits until dir lets a chunk through: not cut, and its delay
// served. It reports false when the connection or the network closed, or
// the link was reset, meanwhile.
func (n *Network) pass(p *proxied, dir link) bool {
	delayed := false
	for {
		n.mu.Lock()
		r, changed, closed := n.rules[dir], n.healed, n.closed
		n.mu.Unlock()
		switch {
		case closed || r.reset:
			return false
		case r.cut:
			select {
			case <-changed:
			case <-p.gone:
				return false
			}
			continue
		case r.delay > 0 && !delayed:
			d := r.delay
			if r.jitter > 0 {
				d += rand.N(r.jitter)
			}
			delayed = true
			t := n.src.NewTimer(d)
			select {
			case <-t.C():
			case <-changed:
				t.Stop()
			case <-p.gone:
				t.Stop()
				return false
			}
			continue
		}
		return true
	}
}

// addrConn is the dialler's end with the real connection's addresses (a
// pipe's are meaningless).
type addrConn struct {
	net.Conn
	local, remote net.Addr
}

func (c *addrConn) LocalAddr() net.Addr  { return c.local }
func (c *addrConn) RemoteAddr() net.Addr { return c.remote }
