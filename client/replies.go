package client

import (
	"github.com/nspl-dev/nspl/wire"
)

// stateArrived records the session state a reply reports.
func (c *Client) stateArrived(cn *conn, st wire.SessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == cn || c.conn == nil {
		c.state = st
	}
}

// attached records an attach reply before its frames can arrive: it is
// called on the stream's reader, ahead of the next message.
func (c *Client) attached(cn *conn, r *wire.EncodedResult) {
	res, err := wire.DecodeResult(r)
	if err != nil || res.Clock == nil {
		return
	}
	c.mu.Lock()
	f := c.followed[res.Domain]
	// An attach of a clock followed but not held by cn is a restoration.
	restored := f != nil && f.conn != cn
	if f == nil {
		f = &followedClock{}
		c.followed[res.Domain] = f
	}
	f.conn, f.attachment, f.retryAt, f.backoff = cn, res.Attachment, 0, InitialBackoff
	c.mu.Unlock()
	if !restored {
		c.follow.Attached(res.Domain, res.Attachment, *res.Clock)
		return
	}
	// A restoration reports the clock it carries as a state: the
	// attachment was interrupted.
	c.follow.Reattached(res.Domain, res.Attachment, *res.Clock)
}

// detached drops a followed clock once its detach is answered; no frame of
// it is delivered after.
func (c *Client) detached(cn *conn, domain string) {
	c.mu.Lock()
	delete(c.followed, domain)
	c.mu.Unlock()
	c.follow.Released(domain)
}

// frameArrived folds a frame of the session that holds its followed clock
// into the follow, which admits only frames of the attachment it records
// (follow.Follow.Apply): the server forwards its session's ordered stream,
// so no frame of an attachment follows the reply that released it, and
// the one check left here is the client's own, across sessions: a frame
// of a session that no longer holds the clock is dropped.
func (c *Client) frameArrived(cn *conn, fr wire.Frame) {
	c.mu.Lock()
	f := c.followed[fr.Domain]
	if f == nil || f.conn != cn {
		c.mu.Unlock()
		return
	}
	// A node shutting down ends its session next: its end interrupts the
	// followed clock, which is attached again on the next session.
	interrupted := fr.Kind == wire.FrameEnd && fr.Reason == wire.NodeShutdown
	if fr.Kind == wire.FrameEnd && !interrupted {
		delete(c.followed, fr.Domain)
	}
	c.mu.Unlock()
	if interrupted {
		c.follow.Interrupted(fr)
		return
	}
	c.follow.Apply(fr)
}

// connLost reports the end of cn: the followed clocks are interrupted and
// the supervisor opens the next session.
func (c *Client) connLost(cn *conn, err error) {
	c.mu.Lock()
	if c.conn != cn {
		c.mu.Unlock()
		return
	}
	c.conn = nil
	n := len(c.followed)
	c.mu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	if n > 0 {
		c.notify(Notice{Kind: Interrupted, Err: err})
	}
	c.wakeSupervisor()
}
