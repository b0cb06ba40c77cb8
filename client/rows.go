package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// RowSink receives one chunk of a streamed result set (wire.RowSink). A
// client's sink runs on the connection's reader, so while it runs nothing
// else of the session is read: a slow sink slows the server's sending
// through the stream's flow control instead of filling memory. It must not
// call the Client. An error it returns ends the stream (ErrConnectionLost
// wrapping it), as the rows cannot be skipped.
type RowSink = wire.RowSink

type rowSinkKey struct{}

// withRowSink carries sink to the request's round trip, which registers it
// with the call; a request context is the one path from Exec to the call
// that leaves the request paths alone.
func withRowSink(ctx context.Context, sink RowSink) context.Context {
	return context.WithValue(ctx, rowSinkKey{}, sink)
}

func rowSinkFrom(ctx context.Context) RowSink {
	sink, _ := ctx.Value(rowSinkKey{}).(RowSink)
	return sink
}

// ExecRows is Exec for a consumer that prints or folds a result's rows as
// they arrive: a LIST DOMAINS's rows are handed to sink in chunks, in
// order, before ExecRows returns, and the result's set has the columns and
// no rows, so neither side holds the whole table. Against a server that
// does not stream rows (its welcome did not say so) the reply's whole set is
// handed to sink in chunks of the same size once it has arrived. Every other
// statement is Exec and never calls sink.
func (c *Client) ExecRows(ctx context.Context, p planner.Plan, sink RowSink) (wire.Result, error) {
	if sink == nil {
		return wire.Result{}, errors.New("client: nil row sink")
	}
	if p == nil {
		return wire.Result{}, errors.New("client: nil plan")
	}
	return c.execRows(ctx, fromPlan(p), sink)
}

func (c *Client) execRows(ctx context.Context, st statement, sink RowSink) (wire.Result, error) {
	if !st.rows {
		return c.exec(ctx, st)
	}
	r, err := c.exec(withRowSink(ctx, sink), st)
	if err != nil || r.Set == nil || len(r.Set.Rows) == 0 {
		return r, err
	}
	rows := r.Set.Rows
	r.Set = &wire.ResultSet{Columns: r.Set.Columns, Rows: [][]wire.Value{}}
	for len(rows) > 0 {
		n := min(len(rows), wire.RowsChunkLimit)
		if err := sink(&wire.ResultSet{Columns: r.Set.Columns, Rows: rows[:n]}); err != nil {
			return wire.Result{}, err
		}
		rows = rows[n:]
	}
	return r, nil
}

// ExecTextRows is ExecText with the rows of each LIST DOMAINS in text
// handed to sink as they arrive, as ExecRows hands them.
func (c *Client) ExecTextRows(ctx context.Context, text string, sink RowSink) ([]wire.Result, error) {
	if sink == nil {
		return nil, errors.New("client: nil row sink")
	}
	return c.execText(ctx, text, sink)
}

// rowsChunk hands one streamed chunk to its call's sink. A chunk for a call
// that asked for none, one over the chunk limit or one that does not decode
// ends the stream.
func (cn *conn) rowsChunk(m wire.ServerMessage) error {
	cn.mu.Lock()
	cl := cn.calls[m.ID]
	cn.mu.Unlock()
	if cl == nil {
		return nil // an abandoned request's
	}
	if cl.rows == nil {
		return fmt.Errorf("%w: rows for request %d, which asked for none", wire.ErrProtocol, m.ID)
	}
	if m.Set == nil {
		return fmt.Errorf("%w: a rows message without a set", wire.ErrProtocol)
	}
	if len(m.Set.Rows) > wire.RowsChunkLimit {
		return fmt.Errorf("%w: a rows message of %d rows, over the %d-row chunk limit", wire.ErrProtocol, len(m.Set.Rows), wire.RowsChunkLimit)
	}
	set, err := wire.DecodeSet(m.Set)
	if err != nil {
		return err
	}
	return cl.rows(set)
}
