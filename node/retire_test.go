package node

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// progressHold is an OnProgress hook that records every report and, once
// armed, holds the next one, as a producer is held behind a slow peer
// delivery: the call returns when the producer's context ends or, when
// slow, only once the test releases it after that.
type progressHold struct {
	reportLog
	mu        sync.Mutex
	armed     bool
	slow      bool
	held      chan struct{} // closed when a report is held
	cancelled chan struct{} // closed when the held call's context ended
	release   chan struct{} // closed to let a slow held call return
	letGoOnce sync.Once
}

func newProgressHold(slow bool) *progressHold {
	return &progressHold{slow: slow, held: make(chan struct{}), cancelled: make(chan struct{}), release: make(chan struct{})}
}

func (h *progressHold) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

// letGo releases a slow held call; it is idempotent.
func (h *progressHold) letGo() { h.letGoOnce.Do(func() { close(h.release) }) }

func (h *progressHold) onProgress(ctx context.Context, rep clockrt.ProgressReport) {
	h.add(ctx, rep)
	h.mu.Lock()
	hold := h.armed
	h.armed = false
	h.mu.Unlock()
	if !hold {
		return
	}
	close(h.held)
	<-ctx.Done()
	close(h.cancelled)
	if h.slow {
		<-h.release
	}
}

// waitClosed waits until ch is closed.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// running returns the domain's running producer.
func running(t *testing.T, n *Node, domain string) *producerRun {
	t.Helper()
	n.producers.mu.Lock()
	defer n.producers.mu.Unlock()
	run := n.producers.running[domain]
	require.NotNil(t, run, "the node runs a producer for %q", domain)
	return run
}

// STOP and DROP are completion boundaries for runtime work: when they
// return, the stopped generation's producer has exited on this node and
// produces nothing more, whether it was waiting for its next tick or
// blocked handing one on when the statement committed. While a retired
// producer is still exiting the node does not count (or advertise) the
// revision that retired it, and the statement waits.
func TestStopReturnsAfterTheProducerExited(t *testing.T) {
	cases := []struct {
		name string
		// hold: the producer is blocked handing on tick 2 when the
		// statement commits; slow: it keeps blocking for a while after
		// its context ends.
		hold, slow bool
		// drop: the STOP's own wait is cut short while the producer is
		// still exiting, and the DROP that follows is the boundary.
		drop bool
	}{
		{name: "stop while the producer waits for its next tick"},
		{name: "stop while the producer is blocked handing on a tick", hold: true},
		{name: "stop while the producer is slow to exit", hold: true, slow: true},
		{name: "drop while the stopped producer is slow to exit", hold: true, slow: true, drop: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := timesource.NewFake(t0)
			h := newProgressHold(tc.slow)
			ctx := context.Background()
			n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake, OnProgress: h.onProgress})
			require.NoError(t, err)
			defer func() { require.NoError(t, n.Close()) }()
			defer h.letGo() // before Close, should the test end early

			_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
			require.NoError(t, err)
			_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
			waitTick(t, n, "prod", 1)
			run := running(t, n, "prod")
			parked(t, fake, time.Second)
			if tc.hold {
				h.arm()
				fake.Advance(time.Second)
				waitClosed(t, h.held, "the producer to block handing on tick 2")
			}

			stmtCtx, cutShort := context.WithCancel(ctx)
			defer cutShort()
			stopped := make(chan error, 1)
			go func() { _, err := n.Stop(stmtCtx, "prod"); stopped <- err }()
			var stopRev uint64
			if tc.slow {
				// The STOP is installed and the producer cancelled, but
				// it has not exited: the revision does not count yet.
				waitClosed(t, h.cancelled, "the producer's retirement to begin")
				stopRev = n.registry.Current("prod").Lifecycle().Revision
				require.Equal(t, clockrt.StateStopped, n.registry.Current("prod").State())
				require.Less(t, n.AdvertisedRevision(), stopRev, "a revision counts once the producers it retires have exited")
				require.False(t, closed(run.p.Done()))
				select {
				case err := <-stopped:
					t.Fatalf("STOP returned (%v) while its producer was still exiting", err)
				default:
				}
			}
			boundary := stopped
			if tc.drop {
				cutShort()
				require.ErrorIs(t, <-stopped, context.Canceled, "the STOP's wait ended before the producer exited")
				o, err := n.Observe("prod")
				require.NoError(t, err)
				dropped := make(chan error, 1)
				go func() { _, err := n.DropDomain(ctx, lifecycle.DropDomain{Name: "prod"}); dropped <- err }()
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				for !o.Read().Missing {
					require.NoError(t, o.Wait(wctx), "waiting for the DROP to be installed")
				}
				require.Less(t, n.AdvertisedRevision(), stopRev, "the DROP's revision does not count while the stopped producer exits")
				select {
				case err := <-dropped:
					t.Fatalf("DROP returned (%v) while the stopped producer was still exiting", err)
				default:
				}
				boundary = dropped
			}
			if tc.slow {
				h.letGo()
			}
			require.NoError(t, <-boundary)

			// The boundary returned: the producer has exited, and no
			// report of its generation follows.
			require.True(t, closed(run.p.Done()), "the stopped generation's producer goroutine has exited")
			_, ok := n.Producing("prod")
			require.False(t, ok)
			if tc.hold {
				require.True(t, closed(h.cancelled), "the blocked hand-on was cancelled")
			}
			seen := len(h.all())
			if tc.drop {
				require.GreaterOrEqual(t, n.AdvertisedRevision(), stopRev)
				return
			}
			fake.Advance(3 * time.Second)
			_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
			require.Equal(t, uint64(2), waitTick(t, n, "prod", 1).Tick.Generation)
			for _, rep := range h.all()[seen:] {
				require.Equal(t, uint64(2), rep.Generation, "a report of the stopped generation after STOP returned: %+v", rep)
			}
		})
	}
}

// A producer retired in the same pass that asks for its successor (STOP;
// START in one commit: same domain, new generation) is gone before the
// successor starts, however slow it is to exit; the commit returns once it
// has, and the successor then produces the new generation.
func TestSuccessorStartsAfterItsPredecessorExited(t *testing.T) {
	fake := timesource.NewFake(t0)
	h := newProgressHold(true)
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake, OnProgress: h.onProgress})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	defer h.letGo()

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "prod", 1)
	run := running(t, n, "prod")
	parked(t, fake, time.Second)
	h.arm()
	fake.Advance(time.Second)
	waitClosed(t, h.held, "the producer to block handing on tick 2")

	committed := make(chan error, 1)
	go func() {
		_, err := n.CommitTransaction(ctx, "prod", steps(
			planner.Stop{}, planner.Start{Mode: planner.StartAtNow, Rate: 1},
		))
		committed <- err
	}()
	// The pass that cancelled the producer has decided about its
	// successor by the time Producing can read the set.
	waitClosed(t, h.cancelled, "the producer's retirement to begin")
	require.Equal(t, uint64(2), n.registry.Current("prod").Generation())
	_, ok := n.Producing("prod")
	require.False(t, ok, "no successor starts while its predecessor is still exiting")
	require.False(t, closed(run.p.Done()))

	h.letGo()
	require.NoError(t, <-committed)
	require.True(t, closed(run.p.Done()))
	require.Equal(t, uint64(2), waitTick(t, n, "prod", 1).Tick.Generation)
	waitProducer(t, n, "prod", "the successor", func(f clockrt.ProducerFence, ok bool) bool { return ok && f.Generation == 2 })
	reps := h.all()
	for i, rep := range reps {
		if rep.Generation == 2 {
			for _, later := range reps[i:] {
				require.Equal(t, uint64(2), later.Generation, "a report of the predecessor after its successor's first: %+v", later)
			}
			break
		}
	}
}
