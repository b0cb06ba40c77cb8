package session

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake UTC every test starts at: 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is one node on a fake clock and a session on it.
type env struct {
	t    testing.TB
	fake *timesource.Fake
	node *node.Node
	sess *Session
	ctx  context.Context
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	fake := timesource.NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	require.NoError(t, n.WaitInstalled(ctx))
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.TimeSource == nil {
		opts.TimeSource = fake
	}
	e := &env{t: t, fake: fake, node: n, sess: New(n, opts), ctx: ctxT(t)}
	t.Cleanup(func() {
		require.NoError(t, e.sess.Close())
		require.NoError(t, n.Close())
	})
	return e
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// exec runs text and requires success.
func (e *env) exec(text string) []wire.Result {
	e.t.Helper()
	rs, err := e.sess.ExecText(e.ctx, text)
	require.NoError(e.t, err, "exec %q", text)
	return rs
}

// last runs text and returns the last result's message.
func (e *env) msg(text string) string {
	e.t.Helper()
	rs := e.exec(text)
	return rs[len(rs)-1].Message
}

// fail runs text and requires it to fail.
func (e *env) fail(text string) error {
	e.t.Helper()
	_, err := e.sess.ExecText(e.ctx, text)
	require.Error(e.t, err, "exec %q", text)
	return err
}

func (e *env) frame() wire.Frame {
	e.t.Helper()
	f, err := e.sess.NextFrame(e.ctx)
	require.NoError(e.t, err)
	return f
}

// waitTick waits on an observer, never a sleep, until the domain's accepted
// tick reaches id.
func (e *env) waitTick(domain string, id uint64) {
	e.t.Helper()
	o, err := e.node.Observe(domain)
	require.NoError(e.t, err)
	ctx := e.ctx
	for {
		if obs := o.Read(); obs.Tick.ID >= id {
			return
		}
		require.NoError(e.t, o.Wait(ctx), "waiting for tick %d of %q", id, domain)
	}
}

// parked waits until the producer has armed its timer for the next tick,
// due d from now, so an Advance lands after its last emission was recorded.
// It names the deadline rather than counting timers because the catalog
// arms a retry timer of its own on the same clock now and then.
func (e *env) parked(d time.Duration) {
	e.t.Helper()
	require.NoError(e.t, e.fake.BlockUntilDue(e.ctx, d))
}

// advance moves the fake clock by d, one period of a rate-1 domain whose
// ticks fall on its boundaries, and waits until tick id is accepted and the
// producer is parked again.
func (e *env) advance(d time.Duration, domain string, id uint64) {
	e.t.Helper()
	e.parked(d)
	e.fake.Advance(d)
	e.waitTick(domain, id)
	e.parked(d)
}

// waitQueued waits, on the lane's own wake-ups, until an unread state or end
// frame on the session's control lane matches match.
func (e *env) waitQueued(what string, match func(wire.Frame) bool) {
	e.t.Helper()
	l := &e.sess.lane
	for {
		l.mu.Lock()
		for _, en := range l.entries[l.head:] {
			if en.frame != nil && match(*en.frame) {
				l.mu.Unlock()
				return
			}
		}
		if l.changed == nil {
			l.changed, l.wantChange = make(chan struct{}), true
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-e.ctx.Done():
			e.t.Fatalf("timed out waiting for %s on the control lane", what)
		}
	}
}

// attachment returns the session's attachment of domain.
func (e *env) attachment(domain string) *attachment {
	e.t.Helper()
	e.sess.mu.Lock()
	defer e.sess.mu.Unlock()
	a := e.sess.attachmentLocked(domain)
	require.NotNil(e.t, a, "no attachment of %q", domain)
	return a
}

// wakeAndWait runs the attachment's delivery task once more, as its
// fan-out starts it on every change of installation or failure it reads,
// and waits for the run to end. It holds the fan-out's list meanwhile, so
// the fan-out wakes no task of it then, and waits for a running task
// first, so the wake starts a run of its own unless the task is halted.
func wakeAndWait(a *attachment) {
	a.fanout.mu.Lock()
	defer a.fanout.mu.Unlock()
	a.task.Wait()
	a.wake()
	a.task.Wait()
}

// orderChecker checks the delivery order a client may rely on for the
// attachment an attach reply announced, item by item of the session's
// ordered stream (lane.take): the reply's place first, then the
// attachment's frames, and nothing of another attachment, an ended one
// included. A reader of NextFrame, which passes over reply places, checks
// its frames after replied.
type orderChecker struct {
	t          testing.TB
	domain     string
	attachment uint64
	replied    bool // the reply's place was taken
	state      clock.Observed
	lastTick   map[uint64]uint64 // generation → newest tick id delivered
	failed     map[uint64]bool   // generations whose error frame was delivered
	ended      bool
}

func newOrderChecker(t testing.TB, reply wire.Result) *orderChecker {
	t.Helper()
	require.NotNil(t, reply.Clock, "an attach reply carries the observed clock")
	return &orderChecker{t: t, domain: reply.Domain, attachment: reply.Attachment, state: *reply.Clock,
		lastTick: map[uint64]uint64{}, failed: map[uint64]bool{}}
}

// item checks the next item of the stream: the reply's place (reply) or a
// frame.
func (c *orderChecker) item(f wire.Frame, reply bool) {
	c.t.Helper()
	if !reply {
		c.see(f)
		return
	}
	require.Equal(c.t, c.domain, f.Domain, "the reply of attachment %d of %q is expected, not %v", c.attachment, c.domain, f)
	require.Equal(c.t, c.attachment, f.Attachment, "the reply of attachment %d is expected, not of %d", c.attachment, f.Attachment)
	require.False(c.t, c.replied, "a second reply of attachment %d", c.attachment)
	c.replied = true
}

// see checks a frame.
func (c *orderChecker) see(f wire.Frame) {
	c.t.Helper()
	require.Equal(c.t, c.domain, f.Domain, "frame %v of another domain than %q", f, c.domain)
	require.Equal(c.t, c.attachment, f.Attachment, "frame %v of another attachment than %d", f, c.attachment)
	require.True(c.t, c.replied, "frame %v precedes its attach reply", f)
	require.False(c.t, c.ended, "frame %v after the end frame", f)
	switch f.Kind {
	case wire.FrameState:
		require.NotEqual(c.t, c.state, f.Clock, "a state frame repeats the observation the client has")
		c.state = f.Clock
	case wire.FrameTick:
		require.Equal(c.t, clock.Paced, c.state.State, "tick %v while the client holds %v", f.Tick, c.state)
		require.Equal(c.t, c.state.Generation, f.Tick.Generation, "tick of another generation than the newest state")
		require.Greater(c.t, f.Tick.ID, c.lastTick[f.Tick.Generation], "tick ids must increase within a generation")
		require.False(c.t, c.failed[f.Tick.Generation], "tick %v after its generation's error frame", f.Tick)
		c.lastTick[f.Tick.Generation] = f.Tick.ID
	case wire.FrameError:
		require.Equal(c.t, clock.Paced, c.state.State, "error frame while the client holds %v", c.state)
		require.Equal(c.t, c.state.Generation, f.Failure.Generation, "error frame of another generation than the newest state")
		require.False(c.t, c.failed[f.Failure.Generation], "a second error frame of generation %d", f.Failure.Generation)
		require.Equal(c.t, f.Domain, f.Failure.Domain)
		c.failed[f.Failure.Generation] = true
	case wire.FrameEnd:
		c.ended = true
	default:
		c.t.Fatalf("unknown frame %v", f)
	}
}
