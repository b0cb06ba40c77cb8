package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// submit submits text's statements with ids from first on.
func submit(t *testing.T, ctx context.Context, s *Session, first uint64, text string) {
	t.Helper()
	plans, err := planner.PlanScript(text)
	require.NoError(t, err)
	for i, p := range plans {
		require.NoError(t, s.Submit(ctx, Request{ID: first + uint64(i), Plan: p}))
	}
}

// nextEvent takes the next event of s's stream.
func nextEvent(t *testing.T, ctx context.Context, s *Session) Event {
	t.Helper()
	ev, err := s.Next(ctx)
	require.NoError(t, err)
	return ev
}

// waitPending waits, on the lane's own wake-ups, until s holds n unread
// entries.
func waitPending(t *testing.T, ctx context.Context, s *Session, n int) {
	t.Helper()
	l := &s.lane
	for {
		l.mu.Lock()
		if len(l.entries)-int(l.head)-l.replies == n {
			l.mu.Unlock()
			return
		}
		if l.changed == nil {
			l.changed, l.wantChange = make(chan struct{}), true
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %d unread entries", n)
		}
	}
}

// The stream a consumer forwards, read by Next alone: an attach's reply
// (carrying the session's state after it) before its attachment's first
// frame; a detach's reply after the attachment's last frame, the untaken
// tick withdrawn, naming the released domain; and a post after every
// reply before it.
func TestStreamOrdersRepliesAndFrames(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	s := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake})
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	submit(t, e.ctx, s, 1, "USE prod; ATTACH DOMAIN CLOCK;")
	ev := nextEvent(t, e.ctx, s)
	require.Equal(t, EventReply, ev.Kind)
	require.Equal(t, uint64(1), ev.ID)
	require.Equal(t, "prod", ev.State.Active)
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, EventReply, ev.Kind, "the attach reply comes before its first frame: %v", ev)
	require.Equal(t, uint64(2), ev.ID)
	require.NoError(t, ev.Err)
	require.Equal(t, "ATTACH DOMAIN CLOCK;", ev.Result.Statement)
	att := ev.Result.Attachment
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, EventFrame, ev.Kind)
	require.Equal(t, wire.FrameTick, ev.Frame.Kind)
	require.Equal(t, att, ev.Frame.Attachment)

	// Tick 2 is queued and never taken: the detach withdraws it, and its
	// reply is the next event.
	e.advance(time.Second, "prod", 2)
	waitPending(t, e.ctx, s, 1)
	submit(t, e.ctx, s, 3, "DETACH DOMAIN CLOCK; BEGIN;")
	require.NoError(t, s.Post(e.ctx, 5, "after"))
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, EventReply, ev.Kind, "no frame of the attachment after its detach: %v", ev)
	require.Equal(t, uint64(3), ev.ID)
	require.NoError(t, ev.Err)
	require.Equal(t, "prod", ev.Released)
	require.False(t, ev.State.InTx, "the state right after the detach, not after the BEGIN behind it")
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, uint64(4), ev.ID)
	require.True(t, ev.State.InTx)
	require.Equal(t, 1, s.Pending())
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, EventPost, ev.Kind)
	require.Equal(t, uint64(5), ev.ID)
	require.Equal(t, "after", ev.Tag)
	require.Zero(t, s.Pending())
}

// A reply an attach places before its request ends holds the stream: the
// reader waits at it, and the frame delivery queued behind it is not taken
// before the reply is filled.
func TestStreamWaitsAtAnUnfilledReply(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	s := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake})
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	submit(t, e.ctx, s, 1, "USE prod;")
	nextEvent(t, e.ctx, s)

	// The attach runs as Submit runs it, up to its reply.
	<-s.turn
	c := &call{req: Request{ID: 2, Plan: planner.Attach{}}, stream: true}
	r, _, err := s.run(e.ctx, c, nil)
	require.NoError(t, err)
	require.Equal(t, 2, s.Pending(), "the reply's entry and the tick behind it")
	waiting, stop := context.WithCancel(e.ctx)
	stop()
	_, err = s.Next(waiting)
	require.ErrorIs(t, err, context.Canceled, "nothing is taken before the reply is filled")

	s.lane.fill(c.reply, Event{Kind: EventReply, ID: 2, Result: r})
	s.turn <- struct{}{}
	ev := nextEvent(t, e.ctx, s)
	require.Equal(t, EventReply, ev.Kind)
	require.Equal(t, r.Attachment, ev.Result.Attachment)
	ev = nextEvent(t, e.ctx, s)
	require.Equal(t, wire.FrameTick, ev.Frame.Kind)
}

// A submitted LIST DOMAINS with Rows streams its rows as chunks ahead of
// its reply, whose set has the columns and no rows; with a lane of one,
// each chunk waits for the reader.
func TestStreamRowsBeforeTheirReply(t *testing.T) {
	e := newEnv(t, Options{})
	var b strings.Builder
	for i := range ListChunkRows + 3 {
		fmt.Fprintf(&b, "CREATE DOMAIN d%03d;", i)
	}
	e.exec(b.String())
	s := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake, LaneCapacity: 1})
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	done := make(chan error, 1)
	go func() { done <- s.Submit(e.ctx, Request{ID: 7, Plan: planner.ListDomains{}, Rows: true}) }()
	rows := 0
	for {
		ev := nextEvent(t, e.ctx, s)
		require.Equal(t, uint64(7), ev.ID)
		if ev.Kind == EventReply {
			require.NoError(t, ev.Err)
			require.Empty(t, ev.Result.Set.Rows)
			require.Equal(t, listColumns, ev.Result.Set.Columns)
			break
		}
		require.Equal(t, EventRows, ev.Kind)
		require.LessOrEqual(t, len(ev.Set.Rows), ListChunkRows)
		require.LessOrEqual(t, s.Pending(), 1, "the chunks wait for room")
		rows += len(ev.Set.Rows)
	}
	require.Equal(t, ListChunkRows+3, rows)
	require.NoError(t, <-done)
}

// EndAttachments ends every attachment with an end frame of its reason, in
// domain order, behind what was queued, and nothing of them follows; an
// attachment that ended on its own gets no second end.
func TestStreamEndAttachments(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN b WITH PERIOD 1s SKEW 0s; CREATE DOMAIN a; CREATE DOMAIN c;")
	s := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake})
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	submit(t, e.ctx, s, 1, "USE c; ATTACH DOMAIN CLOCK; DROP DOMAIN c;")
	replies, removed := 0, false
	for replies < 3 || !removed {
		ev := nextEvent(t, e.ctx, s)
		if ev.Kind == EventReply {
			require.NoError(t, ev.Err)
			replies++
			continue
		}
		require.Equal(t, wire.FrameEnd, ev.Frame.Kind)
		require.Equal(t, wire.DomainRemoved, ev.Frame.Reason)
		removed = true
	}

	submit(t, e.ctx, s, 4, "USE b; ATTACH DOMAIN CLOCK; USE a; ATTACH DOMAIN CLOCK;")
	require.NoError(t, s.EndAttachments(e.ctx, wire.NodeShutdown))
	for id := uint64(4); id <= 7; id++ {
		ev := nextEvent(t, e.ctx, s)
		require.Equal(t, EventReply, ev.Kind)
		require.Equal(t, id, ev.ID)
	}
	for _, d := range []string{"a", "b"} {
		ev := nextEvent(t, e.ctx, s)
		require.Equal(t, EventFrame, ev.Kind)
		require.Equal(t, wire.FrameEnd, ev.Frame.Kind)
		require.Equal(t, wire.NodeShutdown, ev.Frame.Reason)
		require.Equal(t, d, ev.Frame.Domain, "in domain order, none for the ended attachment of c")
	}
	require.Equal(t, []string{"c"}, s.Attached(), "the ended attachment stays until a later attach or detach")
	e.exec("USE b; START AT NOW;")
	e.waitTick("b", 1)
	require.Zero(t, s.Pending())
}
