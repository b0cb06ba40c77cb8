package client

import (
	"context"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl/wire"
)

// acquire takes the request lane.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case <-c.lane:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
}

func (c *Client) release() { c.lane <- struct{}{} }

// request runs one request on the lane, connecting first if no session is
// open; upload is the archive sent ahead of it, if any.
func (c *Client) request(ctx context.Context, m wire.ClientMessage, kind callKind, timeout time.Duration, upload []byte) (wire.ServerMessage, error) {
	if c.ctx.Err() != nil {
		return wire.ServerMessage{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return wire.ServerMessage{}, err
	}
	if err := c.acquire(ctx); err != nil {
		return wire.ServerMessage{}, err
	}
	defer c.release()
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		var err error
		if cn, err = c.connect(ctx); err != nil {
			return wire.ServerMessage{}, err
		}
	}
	return c.roundTrip(ctx, cn, m, kind, timeout, upload)
}

// roundTrip sends upload, in archive pieces, and then m on cn and waits for
// its answer; the caller holds the lane. A cancelled ctx sends a cancel and
// waits CancelGrace for the answer (with AbandonCancelled, sends it in the
// background and returns at once); a timeout (restorations) ends the
// session instead.
func (c *Client) roundTrip(ctx context.Context, cn *conn, m wire.ClientMessage, kind callKind, timeout time.Duration, upload []byte) (wire.ServerMessage, error) {
	m.ID = c.nextID.Add(1)
	cl, err := cn.register(m.ID, kind, rowSinkFrom(ctx))
	if err != nil {
		return wire.ServerMessage{}, err
	}
	m.Rows = cl.rows != nil && cn.rows
	if err := cn.sendArchive(m.ID, upload); err != nil {
		cn.forget(m.ID)
		cn.close(err)
		return wire.ServerMessage{}, err
	}
	if err := cn.send(m); err != nil {
		cn.forget(m.ID)
		cn.close(err)
		return wire.ServerMessage{}, err
	}
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := c.src.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C()
	}
	select {
	case r := <-cl.done:
		return r, nil
	case <-cn.lost:
		return wire.ServerMessage{}, cn.lostError()
	case <-timeoutC:
		err := fmt.Errorf("%w: no answer within %s", ErrConnectionLost, timeout)
		cn.close(err)
		return wire.ServerMessage{}, err
	case <-ctx.Done():
	}
	if c.cfg.CancelGrace < 0 {
		// The answer is no longer waited for: forgotten, it is dropped
		// when it comes. The send may wait on a node that reads nothing;
		// it ends at the latest when the connection closes.
		cn.forget(m.ID)
		go func() { _ = cn.send(wire.ClientMessage{Type: wire.TypeCancel, ID: m.ID}) }()
		return wire.ServerMessage{}, ctx.Err()
	}
	_ = cn.send(wire.ClientMessage{Type: wire.TypeCancel, ID: m.ID})
	grace := c.src.NewTimer(c.cfg.CancelGrace)
	defer grace.Stop()
	select {
	case r := <-cl.done:
		return r, nil
	case <-cn.lost:
		return wire.ServerMessage{}, ctx.Err()
	case <-grace.C():
		cn.forget(m.ID)
		return wire.ServerMessage{}, ctx.Err()
	}
}
