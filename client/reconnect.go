package client

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/wire"
)

// connect opens a session on the first URL that answers, restores the
// active domain and attaches the followed clocks again, then publishes the
// session. The caller holds the lane.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	var errs []error
	var cn *conn
	c.mu.Lock()
	resume := ""
	if c.state.InTx {
		resume = c.resume
	}
	c.mu.Unlock()
	for _, u := range c.cfg.URLs {
		var err error
		if cn, err = c.dial(ctx, u, resume); err == nil {
			break
		}
		errs = append(errs, err)
		if ctx.Err() != nil || c.ctx.Err() != nil {
			break
		}
	}
	if cn == nil {
		return nil, errors.Join(errs...)
	}
	c.mu.Lock()
	prevTx, lostTx := c.state.TxDomain, c.state.InTx
	active := c.state.Active
	c.state = wire.SessionState{}
	resumed := lostTx && cn.resumed != nil && cn.resumed.InTx
	if resumed {
		c.state = *cn.resumed
	}
	c.resume = cn.resume
	for _, f := range c.followed {
		f.conn, f.backoff, f.retryAt = nil, InitialBackoff, 0
	}
	reconnect := c.conn != nil || len(c.followed) > 0 || active != ""
	c.mu.Unlock()
	switch {
	case resumed:
		c.notify(Notice{Kind: TransactionResumed, Domain: cn.resumed.TxDomain, Node: cn.node})
	case lostTx:
		c.notify(Notice{Kind: TransactionLost, Domain: prevTx})
	}
	if reconnect {
		c.notify(Notice{Kind: Reconnected, Node: cn.node})
	}
	c.restore(cn, active)
	c.mu.Lock()
	if c.ctx.Err() != nil {
		// Closed meanwhile: Close has read c.conn already, so the session
		// it would not see is ended here.
		c.mu.Unlock()
		cn.close(ErrClosed)
		return nil, ErrClosed
	}
	c.conn = cn
	c.mu.Unlock()
	if err := cn.lostError(); err != nil {
		// Lost during restoration: the supervisor tries again.
		c.connLost(cn, err)
		return nil, err
	}
	return cn, nil
}

// restore attaches every followed clock whose restoration is due on cn,
// then makes active the session's active domain again. The caller holds the
// lane.
func (c *Client) restore(cn *conn, active string) {
	now := c.src.Monotonic()
	c.mu.Lock()
	var due []string
	for d, f := range c.followed {
		if f.conn != cn && (f.retryAt == 0 || f.retryAt <= now) {
			due = append(due, d)
		}
	}
	c.mu.Unlock()
	sort.Strings(due)
	for _, d := range due {
		if cn.lostError() != nil {
			return
		}
		c.restoreOne(cn, d)
	}
	if active == "" || cn.lostError() != nil {
		return
	}
	c.mu.Lock()
	current := c.state.Active
	c.mu.Unlock()
	if current != active {
		_, _ = c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: planner.Use{Name: active}.String()}, callPlain, c.cfg.RequestTimeout, nil)
	}
}

// restoreOne attaches domain's clock again on cn: USE it, then ATTACH.
func (c *Client) restoreOne(cn *conn, domain string) {
	use := planner.Use{Name: domain}.String()
	m, err := c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: use}, callPlain, c.cfg.RequestTimeout, nil)
	if err == nil && m.Type != wire.TypeError {
		m, err = c.roundTrip(c.ctx, cn, wire.ClientMessage{Type: wire.TypeExec, Text: planner.Attach{}.String()}, callAttach, c.cfg.RequestTimeout, nil)
	}
	if err != nil {
		return // the session ended; the next one tries again
	}
	if m.Type != wire.TypeError {
		c.notify(Notice{Kind: Restored, Domain: domain, Node: cn.node})
		return
	}
	refusal := follow.DecodeError(m.Error)
	if le := record.AsError(refusal); le != nil && le.Code == record.CodeDomainNotFound {
		c.mu.Lock()
		f := c.followed[domain]
		delete(c.followed, domain)
		c.mu.Unlock()
		if f != nil {
			c.follow.Apply(wire.Frame{Domain: domain, Attachment: f.attachment, Kind: wire.FrameEnd, Reason: wire.DomainRemoved})
		}
		return
	}
	c.mu.Lock()
	f := c.followed[domain]
	var wait time.Duration
	if f != nil {
		wait = f.backoff
		f.retryAt = c.src.Monotonic() + wait
		f.backoff = min(2*f.backoff, MaxBackoff)
	}
	c.mu.Unlock()
	if f != nil {
		c.notify(Notice{Kind: RestoreRefused, Domain: domain, Node: cn.node, Err: errors.New(refusal.Msg), Retry: wait})
		c.wakeSupervisor()
	}
}
