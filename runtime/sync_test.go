package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSync(t *testing.T) {
	r, _ := newFakeRegistry(t)
	ctx := testContext(t)
	st, first := r.Synced()
	require.Equal(t, SyncState{}, st)

	type result struct {
		st  SyncState
		err error
	}
	waited := make(chan result, 1)
	go func() {
		st, err := r.WaitSynced(ctx, 1)
		waited <- result{st, err}
	}()
	require.NoError(t, r.Sync(4, map[string]Lifecycle{
		"prod": paced(1, 60, 0),
		"dev":  unpaced(2, 0),
		"old":  stopped(0, 0),
	}))
	require.True(t, closed(first))
	res := <-waited
	require.NoError(t, res.err)
	require.Equal(t, SyncState{Count: 1, Revision: 4}, res.st)
	require.Equal(t, []string{"dev", "old", "prod"}, r.Domains())
	require.Equal(t, uint64(4), r.Current("prod").Revision(), "the sync revision is recorded")

	prod, err := r.Bind("prod")
	require.NoError(t, err)
	_, prodChanged := prod.Allocation().Watch()
	dev, err := r.Bind("dev")
	require.NoError(t, err)

	// Revision 6 drops dev, keeps prod unchanged and stops old.
	require.NoError(t, r.Sync(6, map[string]Lifecycle{"prod": paced(1, 60, 0), "old": stopped(3, 0)}))
	require.False(t, closed(prodChanged), "an unchanged domain publishes nothing")
	_, err = dev.Now()
	requireClockErr(t, err, ErrDomainMissing, "dev")
	require.Equal(t, []string{"old", "prod"}, r.Domains())
	require.Equal(t, uint64(3), r.Current("old").Generation())
	st, _ = r.Synced()
	require.Equal(t, SyncState{Count: 2, Revision: 6}, st)

	// An older revision and an invalid lifecycle install nothing.
	err = r.Sync(5, map[string]Lifecycle{})
	requireClockErr(t, err, ErrOlderRevision, "")
	err = r.Sync(7, map[string]Lifecycle{"prod": paced(0, 60, 0)})
	requireClockErr(t, err, ErrInvalidLifecycle, "prod")
	err = r.Sync(7, map[string]Lifecycle{"": unpaced(1, 0)})
	requireClockErr(t, err, ErrInvalidLifecycle, "")
	require.Equal(t, []string{"old", "prod"}, r.Domains())
	st, _ = r.Synced()
	require.Equal(t, SyncState{Count: 2, Revision: 6}, st)

	// A domain installed directly from a newer revision is left alone.
	moved := paced(1, 60, 9)
	moved.Authority = fenceB
	install(t, r, "prod", moved)
	install(t, r, "late", unpaced(1, 9))
	require.NoError(t, r.Sync(8, map[string]Lifecycle{"prod": paced(1, 60, 0)}))
	require.Equal(t, fenceB, r.Current("prod").Authority())
	require.Equal(t, []string{"late", "prod"}, r.Domains())

	// The same revision applied again is allowed and idempotent.
	require.NoError(t, r.Sync(8, map[string]Lifecycle{"prod": paced(1, 60, 0)}))
	st, err = r.WaitSynced(ctx, 4)
	require.NoError(t, err)
	require.Equal(t, SyncState{Count: 4, Revision: 8}, st)
}

func TestWaitSyncedCancelled(t *testing.T) {
	r, _ := newFakeRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.WaitSynced(ctx, 1)
	require.ErrorIs(t, err, ErrWaitCancelled)
	require.ErrorIs(t, err, context.Canceled)
	st, err := r.WaitSynced(ctx, 0)
	require.NoError(t, err, "a count already reached returns at once")
	require.Zero(t, st.Count)
}
