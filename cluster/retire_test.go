package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// STOP through one node returns only after the clock authority's
// producer, on another node, has exited: that node counts and advertises
// the STOP's revision only once its producer is gone, and the serving node
// waits for the advertisement. The authority's producer is held handing on
// a tick, and slow to exit after its retirement cancelled it; its delivery
// of the generation to the peers has ended too when STOP returns.
func TestStopWaitsForThePeersProducer(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	allLive(h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	setup := session.New(h.Member("n1").Node(), session.Options{})
	t.Cleanup(func() { _ = setup.Close() })
	_, err := setup.ExecText(ctx, "CREATE PACED DOMAIN d WITH PERIOD 50ms SKEW 1s; USE d; START AT NOW;")
	require.NoError(t, err)
	d, err := h.Member("n1").Node().Domain("d")
	require.NoError(t, err)
	authority := h.Member(d.Authority.Node)
	require.NotNil(t, authority)
	var serving *cluster.Member
	for _, m := range h.Live() {
		if m != authority {
			serving = m
			break
		}
	}
	h.Eventually(10*time.Second, "the authority's producer to start", func() bool {
		_, ok := authority.Node().Producing("d")
		return ok
	})

	var (
		seen      atomic.Int32
		held      = make(chan struct{})
		cancelled = make(chan struct{})
		release   = make(chan struct{})
	)
	letGo := sync.OnceFunc(func() { close(release) })
	defer letGo() // before the members close, should the test end early
	cluster.SeeProgress(authority, func(ctx context.Context, rep clockrt.ProgressReport) {
		// The first report passes on to delivery, which opens the
		// peers' lanes; the second is held.
		if seen.Add(1) != 2 {
			return
		}
		close(held)
		<-ctx.Done()
		close(cancelled)
		<-release
	})
	waitClosed(t, held, "the authority's producer to block handing on a tick")
	require.NotZero(t, cluster.ProgressLanes(authority, "d"), "the authority delivers to its peers")

	sess := sessionOn(t, ctx, serving, "d")
	stopped := make(chan []wire.Result, 1)
	go func() {
		res, err := sess.ExecText(ctx, "STOP;")
		if err != nil {
			t.Errorf("STOP through %s: %v", serving.Node().Name(), err)
		}
		stopped <- res
	}()
	waitClosed(t, cancelled, "the authority to begin retiring its producer")
	in := authority.Node().Installation("d")
	require.Equal(t, clockrt.StateStopped, in.State())
	stopRev := in.Lifecycle().Revision
	require.Less(t, authority.Node().AdvertisedRevision(), stopRev,
		"the authority advertises the STOP's revision only once its producer exited")
	select {
	case <-stopped:
		t.Fatalf("STOP through %s returned while the producer on %s was still exiting", serving.Node().Name(), authority.Node().Name())
	default:
	}

	letGo()
	res := <-stopped
	require.NotEmpty(t, res)
	require.False(t, unconfirmed(res[len(res)-1].Warnings, authority.Node().Name()),
		"the authority confirmed the STOP: %v", res[len(res)-1].Warnings)
	_, ok := authority.Node().Producing("d")
	require.False(t, ok, "no producer of the stopped generation runs on the authority")
	require.Zero(t, cluster.ProgressLanes(authority, "d"), "the stopped generation's delivery to the peers has ended")
	require.GreaterOrEqual(t, authority.Node().AdvertisedRevision(), stopRev)
	got, err := serving.Node().Domain("d")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Stopped, got.Status)
}

// waitClosed waits until ch is closed.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
