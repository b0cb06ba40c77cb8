package node

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

// TestCloseTwice checks that Close is safe to repeat and that a closed node
// refuses control-plane writes with ErrClosed instead of forwarding them to
// a leader (goleak, in TestMain, checks that Close stopped every goroutine
// the node started).
func TestCloseTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var forwarded atomic.Int64
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.NewFake(t0),
		Forward: func(context.Context, catalog.Leader, lifecycle.Command) (lifecycle.Result, error) {
			forwarded.Add(1)
			return lifecycle.Result{}, nil
		}})
	require.NoError(t, err)
	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 100*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, n.Close())
	require.NoError(t, n.Close())
	_, err = n.CreateDomain(ctx, paced("other", time.Second, 100*time.Millisecond))
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, forwarded.Load(), "a closed node forwards nothing")
}
