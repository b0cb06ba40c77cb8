package session

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

func attach(t *testing.T, e *env) (wire.Result, *orderChecker) {
	t.Helper()
	r := e.exec("ATTACH DOMAIN CLOCK;")[0]
	return r, newOrderChecker(t, r)
}

// read takes the next frame of the session's ordered stream and checks it,
// and the reply's place if it comes first, against the delivery order.
func read(t *testing.T, e *env, c *orderChecker) wire.Frame {
	t.Helper()
	return readStream(t, e.ctx, e.sess, c)
}

// readStream is read on another session s.
func readStream(t testing.TB, ctx context.Context, s *Session, c *orderChecker) wire.Frame {
	t.Helper()
	for {
		f, reply, _, err := s.lane.take(ctx, takePlaces)
		require.NoError(t, err)
		c.item(f, reply)
		if !reply {
			return f
		}
	}
}

// Guarantee 1 and the first tick: the reply carries the installed clock,
// takes its place in the stream first, and the attach itself queues the
// accepted tick of the reply's generation behind it, the first frame.
func TestAttachReplyThenTickOfItsGeneration(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms; USE prod; START AT NOW TIME RATE 1;")
	e.waitTick("prod", 1)
	r, c := attach(t, e)
	require.Equal(t, clock.Observed{Generation: 1, State: clock.Paced, Period: uint64(time.Second),
		Skew: uint64(100 * time.Millisecond), LogicalStart: t0, WallStartedAt: t0, Rate: 1}, *r.Clock)
	require.Equal(t, uint64(1), r.Attachment)
	require.Equal(t, "attached to the clock of domain 'prod': generation 1 paced period 1s skew 100ms "+
		"origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1", r.Message)
	require.Equal(t, 1, e.sess.Pending(), "the attach queued the accepted tick behind its reply")
	f := read(t, e, c)
	require.Equal(t, wire.FrameTick, f.Kind)
	require.Equal(t, uint64(1), f.Tick.ID)
	require.Equal(t, t0, f.Tick.Boundary)
	require.Equal(t, t0, f.Tick.AuthorityUTC)
	require.Equal(t, t0, f.Reading)
	require.Equal(t, uint64(1), f.Attachment)
	require.Equal(t, []string{"prod"}, e.sess.Attached())
}

// A cancelled attach request returns no reply, so nothing is attached and
// nothing is delivered: neither a request cancelled before it runs nor one
// cancelled once it runs, which the attach finds after its lookup, before
// its reply takes a place in the stream.
func TestCancelledAttachAnnouncesNothing(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.sess.ExecText(ctx, "ATTACH DOMAIN CLOCK;")
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, e.sess.Attached())
	require.Zero(t, e.sess.Pending())

	// Run on the request lane, as Exec runs it once it holds the lane.
	<-e.sess.turn
	_, _, err = e.sess.run(ctx, &call{req: Request{Plan: planner.Attach{}}}, nil)
	e.sess.turn <- struct{}{}
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, e.sess.Attached())
	queued, stop := context.WithCancel(e.ctx)
	stop()
	_, _, _, err = e.sess.lane.take(queued, takePlaces)
	require.ErrorIs(t, err, context.Canceled, "neither the reply's place nor a frame is queued")

	// The lane is free: the next attach is served.
	e.exec("ATTACH DOMAIN CLOCK;")
}

// Guarantees 2 and 3 under STOP and START: a tick follows only the state
// that reported its generation paced, and ids increase within a generation.
func TestStopStartUnderAttachment(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	r, c := attach(t, e)
	require.Equal(t, clock.Observed{State: clock.Stopped}, *r.Clock)

	e.exec("START AT NOW;")
	f := read(t, e, c)
	require.Equal(t, wire.FrameState, f.Kind, "the first frame after START is the paced state")
	require.Equal(t, clock.Paced, f.Clock.State)
	require.Equal(t, uint64(1), f.Clock.Generation)
	f = read(t, e, c)
	require.Equal(t, wire.FrameTick, f.Kind)
	require.Equal(t, uint64(1), f.Tick.ID)

	for id := uint64(2); id <= 5; id++ {
		e.advance(time.Second, "prod", id)
		f = read(t, e, c)
		require.Equal(t, wire.FrameTick, f.Kind)
		require.Equal(t, id, f.Tick.ID)
	}

	e.exec("STOP;")
	f = read(t, e, c)
	require.Equal(t, wire.FrameState, f.Kind)
	require.Equal(t, clock.Observed{Generation: 1, State: clock.Stopped}, f.Clock)

	e.exec("START AT NOW TIME RATE 2;")
	f = read(t, e, c)
	require.Equal(t, wire.FrameState, f.Kind)
	require.Equal(t, uint64(2), f.Clock.Generation)
	require.Equal(t, clock.Paced, f.Clock.State)
	require.Equal(t, 2.0, f.Clock.Rate)
	f = read(t, e, c)
	require.Equal(t, wire.FrameTick, f.Kind)
	require.Equal(t, uint64(2), f.Tick.Generation)
	require.Equal(t, uint64(1), f.Tick.ID, "ids restart with the generation")
}

// A tick the client has not taken is withdrawn when the clock changes, so
// no tick of an earlier generation follows a newer state.
func TestUntakenTickWithdrawnOnChange(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	_, c := attach(t, e)
	// The slot holds tick 1 of generation 1, unread; restart the domain
	// twice and only then read.
	e.exec("STOP; START AT NOW; STOP; START AT NOW;")
	e.waitTick("prod", 1)
	// Until delivery has seen the restart, the client may still take the
	// tick: it was queued. Once the state frame of generation 3 is queued,
	// every untaken tick before it has been withdrawn.
	e.waitQueued("the state frame of generation 3", func(f wire.Frame) bool {
		return f.Kind == wire.FrameState && f.Clock.Generation == 3
	})
	// And once delivery caught up, the tick of generation 3 is queued
	// behind that state, not in an earlier slot.
	wakeAndWait(e.attachment("prod"))
	var frames []wire.Frame
	for {
		f := read(t, e, c)
		frames = append(frames, f)
		if f.Kind == wire.FrameTick && f.Tick.Generation == 3 {
			break
		}
	}
	for _, f := range frames {
		if f.Kind == wire.FrameTick {
			require.Equal(t, uint64(3), f.Tick.Generation, "frames %v", frames)
		}
	}
}

// Guarantee 4 and the ending attachment: DROP sends one end frame, the
// last; a later attach is served as new, a later detach is refused.
func TestDropEndsAttachment(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	r, c := attach(t, e)
	e.exec("STOP; DROP DOMAIN prod;")
	var f wire.Frame
	for f.Kind != wire.FrameEnd {
		f = read(t, e, c)
	}
	require.Equal(t, wire.DomainRemoved, f.Reason)
	require.Equal(t, r.Attachment, f.Attachment)
	require.Equal(t, `{"domain":"prod","attachment":1,"kind":"end","reason":"DomainRemoved"}`, string(f.AppendJSON(nil)))
	// The end is the last frame: the fan-out holds the ended attachment
	// until its release and wakes it on every change it reads, and such a
	// wake starts nothing.
	wakeAndWait(e.attachment("prod"))
	require.Zero(t, e.sess.Pending(), "a frame follows the end frame")

	// The drop ended the domain's activity, and the domain is missing:
	// attaching again needs USE, which refuses it as not found.
	require.ErrorIs(t, e.fail("ATTACH DOMAIN CLOCK;"), ErrNoActiveDomain)
	require.ErrorIs(t, e.fail("USE prod;"), lifecycle.ErrDomainNotFound)

	// Created again, a detach after the end frame reports the attachment
	// not attached; the domain is attached as a new attachment; an attach
	// on an ending attachment releases it.
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	require.ErrorIs(t, e.fail("DETACH DOMAIN CLOCK;"), ErrNotAttached)
	require.Empty(t, e.sess.Attached())
	r2, c2 := attach(t, e)
	require.Equal(t, uint64(2), r2.Attachment)
	e.exec("DROP DOMAIN prod; CREATE DOMAIN prod; USE prod;")
	for f = read(t, e, c2); f.Kind != wire.FrameEnd; f = read(t, e, c2) {
	}
	r3, c3 := attach(t, e)
	require.Equal(t, uint64(3), r3.Attachment)
	require.Equal(t, clock.Observed{State: clock.Stopped}, *r3.Clock)
	e.exec("START;")
	f = read(t, e, c3)
	require.Equal(t, clock.Unpaced, f.Clock.State)
}

// Guarantee 5: nothing about the domain follows the detach reply, even
// frames that were queued and unread when it ran, and nothing the domain
// does after it reaches the session. Another session attached to the
// domain is the fence for its ticks: the fan-out offers each tick to every
// attachment it holds before it walks them with the next, so once that
// session has read tick 3, a detached attachment still held would have
// been offered tick 2. The next item of this session's stream is then the
// reply of its next attachment.
func TestDetachWithdrawsAndStops(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; CREATE DOMAIN other;")
	fence := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, fence.Close()) })
	rs, err := fence.ExecText(e.ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	fc := newOrderChecker(t, rs[1])
	attach(t, e)
	e.exec("START AT NOW;")
	e.waitTick("prod", 1)
	e.waitQueued("the paced state of prod", func(f wire.Frame) bool { return f.Kind == wire.FrameState && f.Clock.State == clock.Paced })
	require.Equal(t, "detached from the clock of domain 'prod'", e.msg("DETACH DOMAIN CLOCK;"))
	require.Zero(t, e.sess.Pending(), "the unread frames of the detached attachment are withdrawn")

	for f := readStream(t, e.ctx, fence, fc); f.Kind != wire.FrameTick; f = readStream(t, e.ctx, fence, fc) {
	}
	for id := uint64(2); id <= 3; id++ {
		e.advance(time.Second, "prod", id)
		require.Equal(t, id, readStream(t, e.ctx, fence, fc).Tick.ID)
	}
	require.Zero(t, e.sess.Pending(), "a tick of prod follows the detach reply")

	e.exec("STOP; USE other;")
	_, c := attach(t, e)
	e.exec("START;")
	f := read(t, e, c)
	require.Equal(t, clock.Unpaced, f.Clock.State, "the reply of the next attachment, then its state, and nothing of prod")
	require.Zero(t, e.sess.Pending())
}

// A stalled consumer holds one tick slot while thousands of ticks are
// produced; memory stays flat, and it then receives the newest tick.
func TestStalledConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("produces thousands of ticks")
	}
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1ms SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	attach(t, e)
	const ticks = 3000
	heap := func() uint64 {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var before uint64
	for id := uint64(2); id <= ticks; id++ {
		e.advance(time.Millisecond, "prod", id)
		require.LessOrEqual(t, e.sess.Pending(), 1, "one tick slot, never a backlog")
		if id == 200 {
			before = heap()
		}
	}
	after := heap()
	t.Logf("heap after 200 ticks %d B, after %d ticks %d B", before, ticks, after)
	require.Less(t, int64(after)-int64(before), int64(512<<10), "memory grows with the ticks produced")

	var last uint64
	reads := 0
	for last < ticks {
		f := e.frame()
		reads++
		require.Equal(t, wire.FrameTick, f.Kind)
		require.Greater(t, f.Tick.ID, last)
		last = f.Tick.ID
	}
	require.Equal(t, uint64(ticks), last)
	require.LessOrEqual(t, reads, 3, "a stalled consumer gets the newest tick, not a backlog")
}

// logBuffer is a slog handler target that tests read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Frames over the frame limit are logged and skipped: a paced state that
// does not fit is never announced, so the ticks of its generation, which
// fit, are not sent either. Another session, with the default limit, is the
// fence for those ticks: once it has read tick 3, the fan-out has offered
// tick 2 to every attachment it holds.
func TestFrameLimit(t *testing.T) {
	paced := wire.Frame{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: clock.Observed{Generation: 1, State: clock.Paced,
		Period: uint64(time.Second), LogicalStart: t0, WallStartedAt: t0, Rate: 1}}
	limit := len(paced.AppendJSON(nil)) - 1
	logs := &logBuffer{}
	e := newEnv(t, Options{FrameLimit: limit, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	fence := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, fence.Close()) })
	rs, err := fence.ExecText(e.ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	fc := newOrderChecker(t, rs[1])
	_, c := attach(t, e)
	e.exec("START AT NOW;")
	e.waitTick("prod", 1)
	// The delivery task reads the newest observation when it runs: a run
	// after START meets the paced state, tries it and skips it.
	wakeAndWait(e.attachment("prod"))
	require.Contains(t, logs.String(), "frame exceeds the frame limit; skipped")
	require.Contains(t, logs.String(), "kind=state")
	require.Contains(t, logs.String(), fmt.Sprintf("size=%d limit=%d", limit+1, limit))
	for f := readStream(t, e.ctx, fence, fc); f.Kind != wire.FrameTick; f = readStream(t, e.ctx, fence, fc) {
	}
	for id := uint64(2); id <= 3; id++ {
		e.advance(time.Second, "prod", id)
		require.Equal(t, id, readStream(t, e.ctx, fence, fc).Tick.ID)
	}
	require.Zero(t, e.sess.Pending(), "a tick of a generation the client was never told is paced")
	e.exec("STOP;")
	f := read(t, e, c)
	require.Equal(t, clock.Observed{Generation: 1, State: clock.Stopped}, f.Clock, "the paced state and its ticks were skipped")

	// An attach whose reply does not fit attaches nothing.
	e.exec("DETACH DOMAIN CLOCK; START AT NOW;")
	err = e.fail("ATTACH DOMAIN CLOCK;")
	require.ErrorIs(t, err, ErrFrameTooLarge)
	require.Empty(t, e.sess.Attached())
}

// A tick frame that does not fit the frame limit is logged and skipped,
// leaving the slot empty; a later tick that fits is sent. No domain's
// ticks outgrow its paced state frame, which is larger, so the attachment
// is built here with a limit between the two ticks' frames.
func TestTickOverTheFrameLimit(t *testing.T) {
	logs := &logBuffer{}
	paced := clock.Observed{Generation: 1, State: clock.Paced, Period: 1, Rate: 1}
	small := clockrt.Tick{Generation: 1, ID: 2, Boundary: 1, AuthorityUTC: 1}
	big := clockrt.Tick{Generation: 1, ID: 1, Boundary: -1 << 62, AuthorityUTC: -1 << 62}
	base := tickFrameBase("prod", 1)
	limit := base + tickDigits(small, 1)
	s := &Session{logger: slog.New(slog.NewTextHandler(logs, nil)), frameLimit: limit}
	l := newLane(1)
	a := &attachment{id: 1, domain: "prod", lane: l, sess: s, last: paced, tickBase: int32(base), tickRoom: int32(limit - base)}
	offer := func(tick clockrt.Tick, reading int64) {
		a.offerTick(clockrt.Observation{Clock: paced, Tick: tick}, newTickRecord(tick, clockrt.Snapshot{Generation: 1, Time: reading}, nil), nil)
	}

	offer(big, -1<<62)
	require.Zero(t, l.len(), "a tick frame over the limit is queued")
	require.Contains(t, logs.String(), "frame exceeds the frame limit; skipped")
	require.Contains(t, logs.String(), "kind=tick")
	offer(small, 1)
	f, err := l.next(context.Background())
	require.NoError(t, err)
	require.Equal(t, small, f.Tick)
	require.Equal(t, limit, len(f.AppendJSON(nil)), "the frame that fits is at the limit")
}

// Ending the session stops every delivery task without a frame, and its
// attachments leave their fan-outs.
func TestCloseStopsDelivery(t *testing.T) {
	e := newEnv(t, Options{})
	before := fanoutCount()
	e.exec("CREATE PACED DOMAIN a WITH PERIOD 1s SKEW 0s; CREATE DOMAIN b; USE a; START AT NOW; ATTACH DOMAIN CLOCK;" +
		"USE b; ATTACH DOMAIN CLOCK;")
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := e.sess.NextFrame(context.Background()); err != nil {
				done <- err
				return
			}
		}
	}()
	require.NoError(t, e.sess.Close())
	require.ErrorIs(t, <-done, ErrClosed)
	require.Zero(t, e.sess.Pending())
	require.Equal(t, before, fanoutCount(), "an attachment of the closed session is still delivered to")
}

// Nothing about an attachment is persisted. The catalog is the node's only
// durable state, and attaching, following ticks, detaching and a session
// that ends while attached commit nothing to it: the revision SHOW CLUSTER
// STATUS reports and the domains LIST DOMAINS lists stay those the
// lifecycle statements left.
func TestAttachmentCommitsNothing(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN other; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	committed := func() (uint64, [][]wire.Value) {
		t.Helper()
		st := e.exec("SHOW CLUSTER STATUS;")[0].Set
		require.Equal(t, "node", st.Rows[0][st.Column("kind")].Text())
		return st.Rows[0][st.Column("revision")].Uint(), e.exec("LIST DOMAINS;")[0].Set.Rows
	}
	revision, domains := committed()

	_, c := attach(t, e)
	require.Equal(t, uint64(1), read(t, e, c).Tick.ID)
	e.advance(time.Second, "prod", 2)
	require.Equal(t, uint64(2), read(t, e, c).Tick.ID)
	require.Equal(t, "detached from the clock of domain 'prod'", e.msg("DETACH DOMAIN CLOCK;"))
	held := New(e.node, Options{Logger: quietLogger()})
	_, err := held.ExecText(e.ctx, "USE prod; ATTACH DOMAIN CLOCK; USE other; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	require.NoError(t, held.Close())

	gotRevision, gotDomains := committed()
	require.Equal(t, revision, gotRevision, "attachments committed a catalog revision")
	require.Equal(t, domains, gotDomains)
}
