package node

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/planner"
)

// Settled holds while the node has no clock work under way: not while a
// producer is busy with a report (here held in the node's OnProgress), and
// again once the producer waits on its timer. A driver of virtual time
// steps only while it holds.
func TestSettledWaitsForTheProducerToPark(t *testing.T) {
	fake := timesource.NewFake(t0)
	release := make(chan struct{})
	inEmit := make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RaftLogLevel: slog.LevelError, TimeSource: fake,
		OnProgress: func(ctx context.Context, rep clockrt.ProgressReport) {
			select {
			case inEmit <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	waitSettled := func(what string) {
		for !n.Settled() {
			select {
			case <-ctx.Done():
				t.Fatal("the node never settled " + what)
			case <-time.After(time.Millisecond):
			}
		}
	}
	waitSettled("after its open, whose whole reconcile it had to pass")

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	select {
	case <-inEmit:
	case <-ctx.Done():
		t.Fatal("the producer never emitted tick 1")
	}
	require.False(t, n.Settled(), "the producer is busy with tick 1")
	close(release)
	waitSettled("after the producer was released") // it arms its timer for tick 2 and waits
	require.NoError(t, fake.BlockUntil(ctx, 1))
}
