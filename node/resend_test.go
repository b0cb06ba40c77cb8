package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// A write sent again under the request id of an attempt that committed
// gets that attempt's result, even where the write would now be refused
// before it is proposed: here a START resent after its domain was stopped
// and dropped (found by make faults seed 302, where a remote client's
// resend reported "not found" for a START that had committed).
func TestResentWriteGetsTheFirstAttemptsResult(t *testing.T) {
	n := openNode(t, timesource.NewFake(t0), "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	start := planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request()
	sent := lifecycle.WithRequestID(ctx, "w/test/1")
	first, err := n.Start(sent, "prod", start)
	require.NoError(t, err)
	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "prod"})
	require.NoError(t, err)

	again, err := n.Start(sent, "prod", start)
	require.NoError(t, err, "the resend is answered with the first attempt's result")
	require.Equal(t, first.Revision, again.Revision)
	_, err = n.Start(ctx, "prod", start)
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound, "a new write is still refused")
}
