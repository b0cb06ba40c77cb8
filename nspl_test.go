package nspl

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/runtime/timesource"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const t0 = int64(1767225600) * int64(time.Second)

func openEngine(t *testing.T) (*Engine, *timesource.Fake) {
	t.Helper()
	fake := timesource.NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := Open(ctx, Options{TimeSource: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	return eng, fake
}

func paced(gen uint64) clock.Observed {
	return clock.Observed{Generation: gen, State: clock.Paced, Period: 1e9, LogicalStart: t0, WallStartedAt: t0, Rate: 1}
}

// Events coalesce per domain: a newer state replaces an unread state and
// drops the unread tick received before it; a newer tick replaces an unread
// tick; an end replaces everything. Frames of a released attachment are
// ignored.
func TestEventsCoalescePerDomain(t *testing.T) {
	s := &Session{clocks: map[string]*followed{
		"a": {attachment: 1, clock: Clock{Domain: "a", Observed: paced(1)}},
		"b": {attachment: 7, clock: Clock{Domain: "b", Observed: clock.Observed{State: clock.Stopped}}},
	}, pending: map[string]*pendingEvents{}}
	tick := func(d string, att, gen, id uint64) wire.Frame {
		return wire.Frame{Domain: d, Attachment: att, Kind: wire.FrameTick,
			Tick: Tick{Generation: gen, ID: id, Boundary: t0 + int64(id-1)*1e9}, Reading: t0 + int64(id)*1e9}
	}
	state := func(d string, att uint64, o clock.Observed) wire.Frame {
		return wire.Frame{Domain: d, Attachment: att, Kind: wire.FrameState, Clock: o}
	}
	for _, f := range []wire.Frame{
		tick("a", 1, 1, 1),
		tick("a", 1, 1, 4),
		state("b", 7, paced(1)),
		tick("a", 1, 1, 3), // older than the newest: ignored
		tick("a", 9, 1, 9), // another attachment: ignored
		state("a", 1, clock.Observed{Generation: 1, State: clock.Stopped}),
		state("a", 1, paced(2)),
		tick("a", 1, 1, 5), // an earlier generation than the newest state: ignored
		tick("a", 1, 2, 2),
		tick("b", 7, 1, 1),
		tick("b", 7, 1, 2),
	} {
		s.applyLocked(f)
	}
	c, ok := s.Clock("a")
	require.True(t, ok)
	require.Equal(t, Clock{Domain: "a", Observed: paced(2), Tick: Tick{Generation: 2, ID: 2, Boundary: t0 + 1e9}, Reading: t0 + 2e9}, c)

	var got []string
	for len(s.queue) > 0 {
		ev, err := s.NextEvent(context.Background())
		require.NoError(t, err)
		got = append(got, ev.Domain+" "+ev.Kind.String()+" "+session.FormatObserved(ev.Clock.Observed)+" tick "+
			strconv.FormatUint(ev.Clock.Tick.ID, 10))
	}
	require.Equal(t, []string{
		"a state generation 2 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 0",
		"a tick generation 2 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 2",
		"b state generation 1 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 0",
		"b tick generation 1 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 2",
	}, got)

	// An end replaces the unread state and tick and ends the following.
	s.applyLocked(state("a", 1, paced(3)))
	s.applyLocked(tick("a", 1, 3, 1))
	s.applyLocked(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.DomainRemoved})
	ev, err := s.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, EventEnd, ev.Kind)
	require.Equal(t, wire.DomainRemoved, ev.Reason)
	_, ok = s.Clock("a")
	require.False(t, ok)
	require.Empty(t, s.queue)
}

// End to end: a followed clock tracks STOP and START, events arrive, and
// Engine.Close closes the open sessions and every goroutine.
func TestFollowAcrossRestart(t *testing.T) {
	eng, fake := openEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.Exec(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	ev, err := sess.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, EventTick, ev.Kind)
	require.Equal(t, uint64(1), ev.Clock.Tick.ID)

	_, err = sess.Exec(ctx, "STOP;")
	require.NoError(t, err)
	ev, err = sess.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, EventState, ev.Kind)
	require.Equal(t, clock.Stopped, ev.Clock.Observed.State)
	c, ok := sess.Clock("prod")
	require.True(t, ok)
	_, err = c.LogicalAt(fake.Now())
	require.ErrorIs(t, err, clock.ErrNotReadable)

	_, err = sess.Exec(ctx, "START AT NOW TIME RATE 10;")
	require.NoError(t, err)
	for ev.Kind != EventTick {
		ev, err = sess.NextEvent(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, uint64(2), ev.Clock.Observed.Generation)
	c, _ = sess.Clock("prod")
	now, err := c.LogicalAt(fake.Now() + int64(time.Second))
	require.NoError(t, err)
	require.Equal(t, fake.Now()+10*int64(time.Second), now)

	// Detach: the clock is no longer followed.
	_, err = sess.Exec(ctx, "DETACH DOMAIN CLOCK;")
	require.NoError(t, err)
	_, ok = sess.Clock("prod")
	require.False(t, ok)

	// A second session stays open; Engine.Close closes it.
	other, err := eng.NewSession()
	require.NoError(t, err)
	_, err = other.Exec(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	require.NoError(t, eng.Close())
	_, err = other.NextEvent(ctx)
	require.ErrorIs(t, err, ErrClosed)
	_, err = eng.NewSession()
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, eng.Close())
}
