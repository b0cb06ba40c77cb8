package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// TestListDomainsStreamsChunks holds the chunking of a streamed LIST
// DOMAINS at, just inside and just outside the chunk limit: every chunk has
// at most ListChunkRows rows, the rows come in name order and all of them,
// the result's set has the columns and no rows, and Exec of the same
// statement still returns the whole set.
func TestListDomainsStreamsChunks(t *testing.T) {
	require.Equal(t, 256, ListChunkRows, "the production chunk limit")
	e := newEnv(t, Options{})
	created := 0
	grow := func(n int) {
		var b strings.Builder
		for ; created < n; created++ {
			fmt.Fprintf(&b, "CREATE DOMAIN d%04d;", created)
		}
		if b.Len() > 0 {
			e.exec(b.String())
		}
	}
	for _, tc := range []struct {
		domains int
		chunks  []int
	}{
		{0, nil},
		{1, []int{1}},
		{ListChunkRows - 1, []int{ListChunkRows - 1}},
		{ListChunkRows, []int{ListChunkRows}},
		{ListChunkRows + 1, []int{ListChunkRows, 1}},
		{2*ListChunkRows + 88, []int{ListChunkRows, ListChunkRows, 88}},
	} {
		t.Run(fmt.Sprint(tc.domains), func(t *testing.T) {
			grow(tc.domains)
			var sizes []int
			var names []string
			r, err := e.sess.ExecRows(e.ctx, planner.ListDomains{}, func(c *wire.ResultSet) error {
				require.Equal(t, listColumns, c.Columns)
				sizes = append(sizes, len(c.Rows))
				for _, row := range c.Rows {
					names = append(names, row[0].Text())
				}
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, tc.chunks, sizes)
			require.Equal(t, plural(tc.domains, "domain"), r.Message)
			require.Equal(t, listColumns, r.Set.Columns)
			require.Empty(t, r.Set.Rows, "streamed rows are not also collected")
			want := make([]string, tc.domains)
			for i := range want {
				want[i] = fmt.Sprintf("d%04d", i)
			}
			require.Equal(t, want, append([]string{}, names...), "every row, in name order")

			whole, err := e.sess.Exec(e.ctx, planner.ListDomains{})
			require.NoError(t, err)
			require.Len(t, whole.Set.Rows, tc.domains)
		})
	}
}

// TestListDomainsStreamFilterAndSinkError checks a LIKE filter streams only
// its matches, and that a sink's error ends the statement with that error
// and stops the listing.
func TestListDomainsStreamFilterAndSinkError(t *testing.T) {
	e := newEnv(t, Options{})
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "CREATE DOMAIN web_%03d; CREATE DOMAIN db_%03d;", i, i)
	}
	e.exec(b.String())

	rows := 0
	r, err := e.sess.ExecRows(e.ctx, planner.ListDomains{Like: "db%"}, func(c *wire.ResultSet) error {
		for _, row := range c.Rows {
			require.True(t, strings.HasPrefix(row[0].Text(), "db_"), row[0].Text())
		}
		rows += len(c.Rows)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 600, rows)
	require.Equal(t, "600 domains like 'db%'", r.Message)

	stop := errors.New("the reader went away")
	calls := 0
	_, err = e.sess.ExecRows(e.ctx, planner.ListDomains{}, func(*wire.ResultSet) error {
		calls++
		return stop
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, calls, "no chunk after the sink's error")

	// A statement that produces no rows never calls the sink.
	_, err = e.sess.ExecRows(e.ctx, planner.Use{Name: "db_000"}, func(*wire.ResultSet) error {
		t.Fatal("USE has no rows to stream")
		return nil
	})
	require.NoError(t, err)
	_, err = e.sess.ExecRows(e.ctx, planner.ListDomains{}, nil)
	require.Error(t, err)
}
