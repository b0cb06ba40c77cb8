package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// scaleAttachments is the number of attached sessions the delivery-order
// test drives at once.
const scaleAttachments = 10000

// TestDeliveryOrderAtScale holds the delivery order with 10,000 sessions
// attached to one domain, half of them before it starts and half after,
// through ticks, a new generation, its clock failure and the domain's
// removal. Every frame of every session is checked, from its attach reply
// on, against the order a client relies on: a state before the ticks of its
// generation; ticks of one generation in increasing order, coalesced to the
// newest; the error frame after its generation's state and last tick, and
// no tick of that generation after it; the end last; and no frame that
// repeats or precedes the attach reply. Frames are taken between the steps,
// while delivery runs, and every session must end with its end frame after
// receiving the failure. It runs on both entry points of a session: Exec
// with the reply places of the stream read beside it (lane.take), and
// Submit with the whole stream read by Next.
func TestDeliveryOrderAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("attaches 10,000 sessions")
	}
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "exec", true: "stream"}[stream]
		t.Run(name, func(t *testing.T) { testDeliveryOrderAtScale(t, stream) })
	}
}

// streamItem takes the next item of s's stream: from Next, where an
// attach reply is the reply's item, or from the lane with reply places.
func streamItem(ctx context.Context, s *Session, stream bool) (wire.Frame, bool, error) {
	if !stream {
		f, reply, _, err := s.lane.take(ctx, takePlaces)
		return f, reply, err
	}
	ev, err := s.Next(ctx)
	switch {
	case err != nil:
		return wire.Frame{}, false, err
	case ev.Kind == EventReply:
		return wire.Frame{Domain: ev.Result.Domain, Attachment: ev.Result.Attachment}, true, ev.Err
	}
	return ev.Frame, false, nil
}

func testDeliveryOrderAtScale(t *testing.T, stream bool) {
	e := newEnv(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e.ctx = ctx // the env's helpers wait within the test's own deadline, not the default 20 s
	taken, stop := context.WithCancel(ctx)
	stop() // NextFrame on an ended context takes only what is queued

	type follower struct {
		s      *Session
		c      *orderChecker
		failed bool
	}
	fs := make([]*follower, scaleAttachments)
	attachAll := func(from, to int) {
		for i := from; i < to; i++ {
			s := New(e.node, Options{Logger: quietLogger()})
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			if !stream {
				rs, err := s.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
				require.NoError(t, err)
				r := rs[len(rs)-1]
				fs[i] = &follower{s: s, c: newOrderChecker(t, r)}
				continue
			}
			require.NoError(t, s.Submit(ctx, Request{ID: 1, Plan: planner.Use{Name: "prod"}}))
			require.NoError(t, s.Submit(ctx, Request{ID: 2, Plan: planner.Attach{}}))
			for _, id := range []uint64{1, 2} {
				ev, err := s.Next(ctx)
				require.NoError(t, err)
				require.Equal(t, EventReply, ev.Kind, "the replies come first: %v", ev)
				require.Equal(t, id, ev.ID)
				require.NoError(t, ev.Err)
				require.Equal(t, "prod", ev.State.Active, "the state right after the request")
				if id == 2 {
					fs[i] = &follower{s: s, c: newOrderChecker(t, ev.Result)}
					fs[i].c.item(wire.Frame{Domain: ev.Result.Domain, Attachment: ev.Result.Attachment}, true)
				}
			}
		}
	}
	see := func(f *follower, fr wire.Frame, reply bool) {
		f.c.item(fr, reply)
		if !reply && fr.Kind == wire.FrameError {
			f.failed = true
		}
	}
	// drain takes every frame queued now, while delivery goes on.
	drain := func(upTo int) {
		for _, f := range fs[:upTo] {
			for {
				fr, reply, err := streamItem(taken, f.s, stream)
				if err != nil {
					require.ErrorIs(t, err, context.Canceled)
					break
				}
				see(f, fr, reply)
			}
		}
	}
	// await reads each session's frames until until holds.
	await := func(what string, until func(*follower) bool) {
		for i, f := range fs {
			for !until(f) {
				fr, reply, err := streamItem(ctx, f.s, stream)
				require.NoError(t, err, "session %d waiting for %s", i, what)
				see(f, fr, reply)
			}
		}
	}

	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	attachAll(0, scaleAttachments/2)
	e.exec("START AT NOW;")
	e.waitTick("prod", 1)
	attachAll(scaleAttachments/2, scaleAttachments)
	for id := uint64(2); id <= 4; id++ {
		e.advance(time.Second, "prod", id)
		drain(scaleAttachments)
	}
	await("tick 4 of generation 1", func(f *follower) bool { return f.c.lastTick[1] == 4 })

	// A new generation at the edge of the range: its first tick, then the
	// projection fails a second later.
	e.exec("STOP; START AT " + edge + ";")
	drain(scaleAttachments)
	e.waitTick("prod", 1)
	drain(scaleAttachments)
	e.parked(time.Second)
	e.fake.Advance(2 * time.Second)
	await("the error frame", func(f *follower) bool { return f.failed })
	for _, f := range fs {
		require.Equal(t, clock.Paced, f.c.state.State)
		require.True(t, f.c.failed[f.c.state.Generation], "the failure is of the newest generation")
	}

	e.exec("STOP; DROP DOMAIN prod;")
	await("the end frame", func(f *follower) bool { return f.c.ended })
	for _, f := range fs {
		require.Zero(t, f.s.Pending(), "nothing follows the end frame")
	}
}
