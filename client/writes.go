package client

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// Backoff between the attempts of a write whose connection was lost.
const (
	writeBackoffMin = 100 * time.Millisecond
	writeBackoffMax = 2 * time.Second
)

// WriteUnknownError is a write whose connection was lost after it was
// sent and that no node answered for again, under its write id, until
// Config.WriteRetry (or the statement's context) ended: it may or may not
// have committed. It matches ErrConnectionLost.
type WriteUnknownError struct {
	Attempts int           // how often the write was sent
	Elapsed  time.Duration // since the first attempt
	WriteID  string
	Last     error // the last attempt's failure
}

func (e *WriteUnknownError) Error() string {
	return fmt.Sprintf("connection to the node was lost after the write was sent, and it was sent %d times under write id %s over %s without an answer (last: %v); it may or may not have taken effect: check with DESCRIBE DOMAIN or SHOW DOMAINS before running it again",
		e.Attempts, e.WriteID, e.Elapsed.Round(time.Millisecond), e.Last)
}

func (e *WriteUnknownError) Unwrap() []error { return []error{ErrConnectionLost, e.Last} }

// errNoWriteIDs is the resend of a write refused because the node the
// client reconnected to does not apply a write once under its id.
var errNoWriteIDs = errors.New("the node reconnected to does not take write ids, so the write is not sent again")

// newWriteID returns a fresh random write id (wire.ClientMessage.Write).
func newWriteID() string {
	var b [18]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// oneWriteKeyword reports whether a statement whose first two keywords
// are first and second makes one catalog write the server applies once
// under a write id: CREATE, ALTER and DROP DOMAIN, START and STOP. The
// server refuses a write id on any other statement.
func oneWriteKeyword(first, second string) bool {
	switch first {
	case "START", "STOP":
		return true
	case "CREATE", "ALTER", "DROP":
		return second == "DOMAIN" || (first == "CREATE" && (second == "PACED" || second == "UNPACED"))
	}
	return false
}

// execWrite runs req, a write with its write id set, and sends it again
// under the same id while its connection is lost after it was sent: it
// reconnects (restoring the active domain), waits a backoff, and resends,
// until an answer comes or Config.WriteRetry from the first attempt (or
// ctx) ends, when it returns a *WriteUnknownError. The cluster applies the
// write once whatever the number of attempts, and answers a resend of one
// it applied with the first result (a refusal included), so the outcome
// returned is the write's own. An answer after a resend carries a warning
// saying so.
func (c *Client) execWrite(ctx context.Context, req wire.ClientMessage, kind callKind) (wire.ServerMessage, error) {
	m, keyed, err := c.sendWrite(ctx, req, kind, false)
	if err == nil || !keyed || !errors.Is(err, ErrConnectionLost) || c.cfg.WriteRetry < 0 {
		return m, err
	}
	start := c.src.Monotonic()
	rctx, stop := timesource.WithTimeout(ctx, c.src, c.cfg.WriteRetry)
	defer stop()
	unknown := func(attempts int, last error) error {
		return &WriteUnknownError{Attempts: attempts, Elapsed: c.src.Monotonic() - start, WriteID: req.Write, Last: last}
	}
	backoff := writeBackoffMin
	attempts := 1
	for {
		if !timesource.Sleep(rctx, c.src, backoff, c.ctx.Done()) {
			if c.ctx.Err() != nil {
				return wire.ServerMessage{}, ErrClosed
			}
			return wire.ServerMessage{}, unknown(attempts, err)
		}
		backoff = min(2*backoff, writeBackoffMax)
		var sent bool
		m, sent, err = c.sendWrite(rctx, req, kind, true)
		if sent {
			attempts++
		}
		var ce *ConnectError
		switch {
		case err == nil:
			c.logger.Debug("write answered after its connection was lost", "write", req.Write, "attempts", attempts)
			if m.Result != nil {
				m.Result.Warnings = append(m.Result.Warnings, fmt.Sprintf(
					"the connection was lost after this statement was sent; it was sent again under its write id (%d attempts in all) and this is its one outcome", attempts))
			}
			return m, nil
		case c.ctx.Err() != nil:
			return wire.ServerMessage{}, ErrClosed
		case errors.Is(err, errNoWriteIDs), rctx.Err() != nil:
			return wire.ServerMessage{}, unknown(attempts, err)
		case !errors.Is(err, ErrConnectionLost) && !errors.As(err, &ce):
			return m, err
		}
	}
}

// sendWrite is request for a write. Its write id travels only to a
// server that takes write ids (keyed reports that it did); a resend is
// refused with errNoWriteIDs by one that does not, and reports keyed only
// once the write reached a session.
func (c *Client) sendWrite(ctx context.Context, m wire.ClientMessage, kind callKind, resend bool) (r wire.ServerMessage, keyed bool, err error) {
	if c.ctx.Err() != nil {
		return wire.ServerMessage{}, false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return wire.ServerMessage{}, false, err
	}
	if err := c.acquire(ctx); err != nil {
		return wire.ServerMessage{}, false, err
	}
	defer c.release()
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		if cn, err = c.connect(ctx); err != nil {
			return wire.ServerMessage{}, false, err
		}
	}
	if !cn.writeIDs {
		if resend {
			return wire.ServerMessage{}, false, errNoWriteIDs
		}
		m.Write = ""
	}
	r, err = c.roundTrip(ctx, cn, m, kind, 0, nil)
	return r, m.Write != "", err
}
