package client

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// TestExecRowsStreamsListDomains runs a streamed LIST DOMAINS through the
// server: every row arrives at the sink in order, in chunks of at most
// wire.RowsChunkLimit, before ExecRows returns a result with the columns and
// no rows; Exec still returns the whole set; and another statement never
// calls the sink.
func TestExecRowsStreamsListDomains(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	const domains = 600
	var b strings.Builder
	for i := range domains {
		fmt.Fprintf(&b, "CREATE DOMAIN d%03d;", i)
	}
	exec(t, c, b.String())

	var sizes []int
	rows, whileWaiting := 0, 0
	r, err := c.ExecRows(e.ctx, planner.ListDomains{}, func(chunk *wire.ResultSet) error {
		// A streamed chunk arrives while its call still waits for the
		// reply; one cut from a whole reply arrives after it.
		c.mu.Lock()
		cn := c.conn
		c.mu.Unlock()
		cn.mu.Lock()
		if len(cn.calls) == 1 {
			whileWaiting++
		}
		cn.mu.Unlock()
		sizes = append(sizes, len(chunk.Rows))
		for _, row := range chunk.Rows {
			require.Equal(t, fmt.Sprintf("d%03d", rows), row[0].Text())
			rows++
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []int{wire.RowsChunkLimit, wire.RowsChunkLimit, domains - 2*wire.RowsChunkLimit}, sizes)
	require.Equal(t, len(sizes), whileWaiting, "every chunk streamed")
	require.Equal(t, "600 domains", r.Message)
	require.Len(t, r.Set.Columns, 4)
	require.Empty(t, r.Set.Rows)

	whole, err := c.Exec(e.ctx, planner.ListDomains{})
	require.NoError(t, err)
	require.Len(t, whole.Set.Rows, domains)

	_, err = c.ExecRows(e.ctx, planner.DescribeDomain{Name: "d000"}, func(*wire.ResultSet) error {
		t.Fatal("DESCRIBE DOMAIN streams no rows")
		return nil
	})
	require.NoError(t, err)
}

// TestRowsChunkRefusals holds the client's checks of a rows message: a chunk
// at the chunk limit is taken, one row over it ends the stream, and so do
// rows for a call that asked for none and a rows message without a set.
func TestRowsChunkRefusals(t *testing.T) {
	chunk := func(n int) *wire.EncodedSet {
		s := &wire.ResultSet{Columns: []wire.Column{{Name: "name", Type: wire.KindText}}}
		for i := range n {
			s.Rows = append(s.Rows, []wire.Value{wire.Text(fmt.Sprint(i))})
		}
		return wire.EncodeSet(s)
	}
	got := 0
	sink := func(s *wire.ResultSet) error { got += len(s.Rows); return nil }
	for _, tc := range []struct {
		name  string
		sink  RowSink
		set   *wire.EncodedSet
		taken int
		fails bool
	}{
		{"just inside the limit", sink, chunk(wire.RowsChunkLimit - 1), wire.RowsChunkLimit - 1, false},
		{"at the limit", sink, chunk(wire.RowsChunkLimit), wire.RowsChunkLimit, false},
		{"just outside the limit", sink, chunk(wire.RowsChunkLimit + 1), 0, true},
		{"no sink", nil, chunk(1), 0, true},
		{"no set", sink, nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = 0
			cn := &conn{calls: map[uint64]*call{7: {kind: callPlain, rows: tc.sink}}}
			err := cn.rowsChunk(wire.ServerMessage{Type: wire.TypeRows, ID: 7, Set: tc.set})
			if tc.fails {
				require.ErrorIs(t, err, wire.ErrProtocol)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.taken, got)
		})
	}
	require.Equal(t, 256, wire.RowsChunkLimit, "the production chunk limit")
}
