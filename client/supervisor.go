package client

import (
	"time"
)

func (c *Client) wakeSupervisor() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// supervise reconnects while clocks are followed and retries refused
// restorations when they are due, until Close.
func (c *Client) supervise() {
	reconnectWait := InitialBackoff
	for {
		wait, ok := c.supervisorStep(&reconnectWait)
		if ok {
			t := c.src.NewTimer(wait)
			select {
			case <-t.C():
			case <-c.kick:
			case <-c.ctx.Done():
				t.Stop()
				return
			}
			t.Stop()
			continue
		}
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
	}
}

// supervisorStep does what is due now and returns how long to wait before
// the next step (ok false: until kicked).
func (c *Client) supervisorStep(reconnectWait *time.Duration) (time.Duration, bool) {
	if err := c.acquire(c.ctx); err != nil {
		return 0, false
	}
	defer c.release()
	c.mu.Lock()
	cn := c.conn
	n := len(c.followed)
	active := c.state.Active
	c.mu.Unlock()
	if n == 0 {
		return 0, false
	}
	if cn == nil {
		if _, err := c.connect(c.ctx); err != nil {
			wait := *reconnectWait
			*reconnectWait = min(2**reconnectWait, MaxBackoff)
			c.logger.Debug("reconnect failed", "err", err, "retry", wait)
			return wait, true
		}
		*reconnectWait = InitialBackoff
		c.mu.Lock()
		cn = c.conn
		c.mu.Unlock()
		if cn == nil {
			return 0, false
		}
	} else {
		c.restore(cn, active)
	}
	// The earliest due restoration on this session.
	now := c.src.Monotonic()
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Duration
	found := false
	for _, f := range c.followed {
		if f.conn != cn && f.retryAt > 0 {
			w := max(f.retryAt-now, 0)
			if !found || w < next {
				next, found = w, true
			}
		}
	}
	return next, found
}
