package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/planner"
)

func TestReceiversRefuseProgressOutsideTheCommittedFence(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	d := startPaced(t, h.Member("n1"), "fenced", 20*time.Millisecond)
	authority := h.Member(d.Authority.Node)
	var bystander, receiver *cluster.Member
	for _, m := range h.Live() {
		switch {
		case m == authority:
		case bystander == nil:
			bystander = m
		default:
			receiver = m
		}
	}
	h.Eventually(10*time.Second, "ticks on the receiver", func() bool {
		_, ok := tickedBy(receiver, "fenced", d.Authority)
		return ok
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	far := func(edit func(*clockrt.ProgressReport)) clockrt.ProgressReport {
		tk := receiver.Node().Progress("fenced")
		rep := clockrt.ProgressReport{Domain: "fenced", Generation: d.Generation, Authority: d.Authority,
			ID: tk.ID + 1_000_000, Boundary: tk.Boundary, AuthorityUTC: tk.AuthorityUTC + int64(time.Hour), Period: d.Period}
		edit(&rep)
		return rep
	}
	cases := []struct {
		name string
		from *cluster.Member
		rep  clockrt.ProgressReport
	}{
		{"the authority's fence signed by another node", bystander, far(func(*clockrt.ProgressReport) {})},
		{"an old generation", authority, far(func(r *clockrt.ProgressReport) { r.Generation-- })},
		{"an old authority revision", authority, far(func(r *clockrt.ProgressReport) { r.Authority.Revision-- })},
		{"another incarnation of the authority", authority, far(func(r *clockrt.ProgressReport) { r.Authority.Incarnation++ })},
	}
	refusedBefore := receiver.Metrics().ProgressRefused
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply, err := peerClient(t, h, c.from.Node().Name()).Progress(ctx, receiver.APIAddr(), c.rep)
			require.NoError(t, err)
			require.Equal(t, interconnect.OutcomeRefused, reply.Outcome, reply.Reason)
		})
	}
	require.Less(t, receiver.Node().Progress("fenced").ID, uint64(1_000_000))
	require.Equal(t, refusedBefore+uint64(len(cases)), receiver.Metrics().ProgressRefused)

	// After STOP and START the previous generation's authority cannot
	// deliver into the new one.
	_, err := receiver.Node().Stop(ctx, "fenced")
	require.NoError(t, err)
	out, err := receiver.Node().Start(ctx, "fenced", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	require.Greater(t, out.Domain.Generation, d.Generation)
	reply, err := peerClient(t, h, authority.Node().Name()).Progress(ctx, receiver.APIAddr(), far(func(*clockrt.ProgressReport) {}))
	require.NoError(t, err)
	require.Equal(t, interconnect.OutcomeRefused, reply.Outcome)
	m := receiver.Metrics()
	require.Positive(t, m.ProgressAccepted)
	require.Positive(t, h.Member(out.Domain.Authority.Node).Metrics().TicksProduced)
}

func TestForgedAheadProgressDoesNotFreezeFollowers(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	d := startPaced(t, h.Member("n1"), "forged", 20*time.Millisecond)
	authority := h.Member(d.Authority.Node)
	var receiver *cluster.Member
	for _, m := range h.Live() {
		if m != authority {
			receiver = m
		}
	}
	h.Eventually(10*time.Second, "ticks on the receiver", func() bool {
		_, ok := tickedBy(receiver, "forged", d.Authority)
		return ok
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The authority's own certificate and fence, with a tick a billion
	// periods ahead, boundary 0 and a UTC ten years in the future.
	forged := clockrt.ProgressReport{Domain: "forged", Generation: d.Generation, Authority: d.Authority,
		ID: 1_000_000_000, Boundary: 0, AuthorityUTC: time.Now().Add(10 * 365 * 24 * time.Hour).UnixNano(), Period: d.Period}
	reply, err := peerClient(t, h, authority.Node().Name()).Progress(ctx, receiver.APIAddr(), forged)
	require.NoError(t, err)
	require.Equal(t, interconnect.OutcomeRefused, reply.Outcome)
	require.Contains(t, reply.Reason, clockrt.ErrImplausibleProgress.Error())
	require.Equal(t, uint64(1), receiver.Metrics().ProgressImplausible)
	require.Less(t, receiver.Node().Progress("forged").ID, uint64(1_000_000_000))

	// Genuine ticks keep arriving.
	after := receiver.Node().Progress("forged").ID
	h.Eventually(10*time.Second, "a genuine tick after the forged one", func() bool {
		return receiver.Node().Progress("forged").ID > after+2
	})
}
