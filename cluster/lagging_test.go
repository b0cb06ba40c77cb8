package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// A write through a member whose installed state lags the cluster is not
// refused by that stale state: a START of a domain the member has not
// installed yet (the leader's appends reach it late) is refused as not
// found only on state confirmed through the leader, so it starts the
// domain the cluster has. Refused by the member's own stale view, a write
// would fail with a reason no linearizable history explains (make faults
// found one: a START refused "not found" on a restarted member replaying
// its log, while the domain existed).
func TestLaggingMemberRefusesNoWriteByStaleState(t *testing.T) {
	const lag = 400 * time.Millisecond
	h := testcluster.New(t, testcluster.Options{Faults: true})
	h.StartThree()
	allLive(h)
	leader := h.Leader()
	var behind *cluster.Member
	for _, m := range h.FollowersOf(leader) {
		behind = m
	}
	h.Net().Delay(leader.Node().Name(), behind.Node().Name(), lag, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Committed through the leader without waiting for the lagging member;
	// a machine that stalls longer than the lag lets the member catch up
	// first, so the create is tried again under another name until the
	// member has not.
	name := ""
	for i := 0; i < 20 && name == ""; i++ {
		try := fmt.Sprintf("late%d", i)
		cctx, ccancel := context.WithTimeout(ctx, lag/4)
		_, err := leader.Node().CreateDomain(cctx, lifecycle.CreateDomain{Name: try, Pace: lifecycle.Unpaced})
		ccancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded, "the create committed, and its completion boundary waited for the lagging member")
		}
		_, err = leader.Node().Domain(try)
		require.NoError(t, err, "committed on the leader")
		if _, err := behind.Node().Domain(try); err != nil {
			name = try // the lagging member has not installed it yet
		}
	}
	require.NotEmpty(t, name, "the lagging member never lagged behind a create")

	out, err := behind.Node().Start(ctx, name, planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err, "a START through the lagging member starts the domain the cluster has")
	require.Equal(t, lifecycle.Running, out.Domain.Status)
}
