package node

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
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

// TestNewWithoutOpen checks the two steps of Open apart: New refuses an
// invalid Config before anything starts, and a node built but never opened
// has nothing to close (goleak checks that it started nothing).
func TestNewWithoutOpen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr error
	}{
		{"negative max clock offset", Config{MaxClockOffset: -time.Second}, ErrConfig},
		{"valid", Config{Name: "a"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quietLogger()
			n, err := New(tc.cfg)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.cfg.Name, n.Name())
			require.Zero(t, n.Installation("any").Lifecycle(), "nothing is installed before Open")
			require.NoError(t, n.Close())
			require.NoError(t, n.Close())
		})
	}
}
