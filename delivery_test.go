package nspl

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// embeddedOrder is the embedded session and its engine's fake clock, with
// the helpers of the remote client's delivery-order test.
type embeddedOrder struct {
	t    *testing.T
	ctx  context.Context
	eng  *Engine
	fake *timesource.Fake
	s    *Session
}

func (e *embeddedOrder) exec(text string) []Result {
	e.t.Helper()
	rs, err := e.s.ExecText(e.ctx, text)
	require.NoError(e.t, err, "exec %q", text)
	return rs
}

// event returns the next clock event, which must be of kind and about
// domain: an event of anything else fails the test instead of passing
// unread.
func (e *embeddedOrder) event(domain string, kind EventKind) ClockEvent {
	e.t.Helper()
	ev, err := e.s.NextEvent(e.ctx)
	require.NoError(e.t, err, "waiting for a %v event of %q", kind, domain)
	require.Equal(e.t, domain, ev.Domain, "event %+v of another domain than %q", ev.Frame(), domain)
	require.Equal(e.t, kind, ev.Kind, "event %+v instead of a %v event", ev.Frame(), kind)
	return ev
}

// accept waits until the producer has armed its timer for the tick due
// period from now and moves the fake clock by period.
func (e *embeddedOrder) accept(period time.Duration) {
	e.t.Helper()
	require.NoError(e.t, e.fake.BlockUntilDue(e.ctx, period), "the producer waits for its next tick")
	e.fake.Advance(period)
}

func (e *embeddedOrder) advanceTick(domain string, period time.Duration, id uint64) ClockEvent {
	e.t.Helper()
	e.accept(period)
	ev := e.event(domain, EventTick)
	require.Equal(e.t, id, ev.Clock.Tick.ID, "tick %+v instead of tick %d", ev.Clock.Tick, id)
	return ev
}

// waitAccepted waits on an observer of the node, never a sleep, until the
// domain's accepted tick of generation reaches id.
func (e *embeddedOrder) waitAccepted(domain string, generation, id uint64) {
	e.t.Helper()
	o, err := e.eng.node.Observe(domain)
	require.NoError(e.t, err)
	for {
		if tick := o.Read().Tick; tick.Generation == generation && tick.ID >= id {
			return
		}
		require.NoError(e.t, o.Wait(e.ctx), "waiting for tick %d of generation %d of %q", id, generation, domain)
	}
}

// followed returns the domains the session follows, as the remote
// client's Followed does.
func (e *embeddedOrder) followed() []string {
	var out []string
	for _, d := range []string{"other", "prod"} {
		if _, ok := e.s.Clock(d); ok {
			out = append(out, d)
		}
	}
	return out
}

// The delivery order as the embedded session observes it, the remote
// client's TestAttachDeliveryOrder on the other entry point: the attach
// reply before the first event of its attachment, here the tick the paced
// clock already held when it attached; ticks of the reply's generation in
// increasing order; a new generation's state before its ticks; nothing
// after the detach reply, though the domain ticks and stops after it,
// fenced by another domain's event that must come after; and the end last,
// fenced the same way.
func TestEmbeddedAttachDeliveryOrder(t *testing.T) {
	eng, fake := openEngine(t)
	t.Cleanup(func() { require.NoError(t, eng.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s, err := eng.NewSession()
	require.NoError(t, err)
	e := &embeddedOrder{t: t, ctx: ctx, eng: eng, fake: fake, s: s}

	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN other; USE prod; START AT NOW;")
	e.waitAccepted("prod", 1, 1)
	res := e.exec("ATTACH DOMAIN CLOCK;")[0]
	require.NotNil(t, res.Clock)
	require.Equal(t, clock.Paced, res.Clock.State)
	require.Equal(t, uint64(1), res.Clock.Generation)
	require.Equal(t, []string{"prod"}, e.followed())

	ev := e.event("prod", EventTick)
	require.Equal(t, res.Attachment, ev.Attachment)
	require.Equal(t, *res.Clock, ev.Clock.Observed, "the tick is of the clock the reply carried")
	require.Equal(t, Tick{Generation: 1, ID: 1, Boundary: t0, AuthorityUTC: t0}, ev.Clock.Tick)
	for id := uint64(2); id <= 4; id++ {
		require.Equal(t, uint64(1), e.advanceTick("prod", time.Second, id).Clock.Tick.Generation)
	}

	e.exec("STOP;")
	ev = e.event("prod", EventState)
	require.Equal(t, clock.Observed{Generation: 1, State: clock.Stopped}, ev.Clock.Observed)
	e.exec("START AT NOW;")
	ev = e.event("prod", EventState)
	require.Equal(t, clock.Paced, ev.Clock.Observed.State)
	require.Equal(t, uint64(2), ev.Clock.Observed.Generation)
	ev = e.event("prod", EventTick)
	require.Equal(t, uint64(2), ev.Clock.Tick.Generation)
	require.Equal(t, uint64(1), ev.Clock.Tick.ID, "ids restart with the generation")

	// The domain ticks and stops after the detach reply; the next event is
	// the other domain's, and nothing else is unread.
	e.exec("DETACH DOMAIN CLOCK;")
	require.Empty(t, e.followed())
	e.accept(time.Second)
	e.waitAccepted("prod", 2, 2)
	e.exec("STOP; USE other; ATTACH DOMAIN CLOCK; START;")
	ev = e.event("other", EventState)
	require.Equal(t, clock.Unpaced, ev.Clock.Observed.State)
	require.Zero(t, s.follow.Pending())

	// A dropped domain ends the attachment with DomainRemoved, last: the
	// other domain's next event follows it.
	e.exec("USE prod; ATTACH DOMAIN CLOCK; DROP DOMAIN prod;")
	ev = e.event("prod", EventEnd)
	require.Equal(t, wire.DomainRemoved, ev.Reason)
	require.Equal(t, []string{"other"}, e.followed())
	e.exec("USE other; STOP;")
	ev = e.event("other", EventState)
	require.Equal(t, clock.Stopped, ev.Clock.Observed.State)
	require.Zero(t, s.follow.Pending())
}
