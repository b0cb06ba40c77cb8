package client

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// followedClock is one clock the client follows.
type followedClock struct {
	conn       *conn         // the session holding the attachment; nil while interrupted
	attachment uint64        // its number in that session
	backoff    time.Duration // the next restoration refusal's wait
	retryAt    time.Duration // monotonic instant of the next restoration; 0 none
}

// Client is a remote session: the same statements, replies, positioned
// errors and clock frames as a local session.Session, served by a node over
// the session protocol.
//
// Exec and ExecText run one request at a time. Clock, NextEvent and Events
// may run concurrently with them. On a lost transport the client opens a new session (trying
// the URLs in order, one second apart doubling to thirty), restores the
// active domain and attaches every followed clock again before any other
// request runs on it; a restoration the new session refuses is retried after
// one second, doubling to thirty, and one refused as not found ends the
// attachment with DomainRemoved. Close ends everything and waits.
type Client struct {
	cfg       Config
	transport http.RoundTripper
	src       timesource.Source
	logger    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	lane   chan struct{} // holding its token runs a request or a restoration
	nextID atomic.Uint64
	follow *follow.Follow // the followed clocks and their events
	kick   chan struct{}  // wakes the supervisor

	mu       sync.Mutex
	conn     *conn
	state    wire.SessionState
	followed map[string]*followedClock
	// resume is the resume token of the newest session's welcome: after
	// a lost connection with a transaction open, the next session names
	// it to take the transaction up.
	resume string
}

// Node returns the name of the node serving the current session ("" while
// disconnected).
func (c *Client) Node() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return ""
	}
	return c.conn.node
}

// ActiveDomain returns the session's active domain as the last reply
// reported it.
func (c *Client) ActiveDomain() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Active
}

// InTransaction reports the open transaction as the last reply reported it.
func (c *Client) InTransaction() (domain string, pending int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.TxDomain, c.state.TxPending, c.state.InTx
}

// Followed returns the domains whose clocks the client follows, sorted.
func (c *Client) Followed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.followed))
	for d := range c.followed {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Pending returns the number of unread clock events.
func (c *Client) Pending() int { return c.follow.Pending() }

// Clock returns the followed clock of domain, as a local session's is: the
// observation of the attach reply or the newest state, and the newest tick
// of its generation. It reports false when the client does not follow the
// domain. A clock interrupted by a lost transport is still followed and
// resumes when it is attached again.
func (c *Client) Clock(domain string) (follow.Clock, bool) { return c.follow.Clock(domain) }

// NextEvent returns the oldest unread clock event, waiting until one arrives,
// ctx ends or the client closes (ErrClosed), coalesced as a local session's
// are. A node draining for shutdown ends the attachment with reason
// wire.NodeShutdown without ending the following: that end is an event, the
// clock stays followed, and the state of its restoration comes after it.
func (c *Client) NextEvent(ctx context.Context) (follow.ClockEvent, error) {
	return c.follow.NextEvent(ctx)
}

// Events returns an iterator over clock events, as NextEvent returns them,
// that ends when ctx ends or the client closes.
func (c *Client) Events(ctx context.Context) iter.Seq[follow.ClockEvent] {
	return c.follow.Events(ctx)
}

// Close ends the session and every goroutine of the client and waits.
// closeGrace bounds how long Close waits for the server to take the
// message that ends the session.
const closeGrace = time.Second

func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn != nil {
		cn.sayClose(min(c.cfg.CancelGrace, closeGrace))
	}
	c.cancel()
	if cn != nil {
		cn.close(ErrClosed)
	}
	// A connect that finished while the close message went out published
	// its session after the read above; one that finishes later sees the
	// client closed and ends its own (connect).
	c.mu.Lock()
	late := c.conn
	c.mu.Unlock()
	if late != nil && late != cn {
		late.close(ErrClosed)
	}
	c.follow.Close()
	c.wg.Wait()
	return nil
}
