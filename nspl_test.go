package nspl

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
	"github.com/nspl-dev/nspl/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const t0 = int64(1767225600) * int64(time.Second)

func openEngine(t *testing.T) (*Engine, *timesource.Fake) {
	t.Helper()
	fake := timesource.NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := Open(ctx, Options{TimeSource: fake, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	return eng, fake
}

// End to end: a followed clock tracks STOP and START, events arrive, and
// Engine.Close closes the open sessions and every goroutine.
func TestFollowAcrossRestart(t *testing.T) {
	eng, fake := openEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.ExecText(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	ev, err := sess.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, EventTick, ev.Kind)
	require.Equal(t, uint64(1), ev.Clock.Tick.ID)

	_, err = sess.ExecText(ctx, "STOP;")
	require.NoError(t, err)
	ev, err = sess.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, EventState, ev.Kind)
	require.Equal(t, clock.Stopped, ev.Clock.Observed.State)
	c, ok := sess.Clock("prod")
	require.True(t, ok)
	_, err = c.LogicalAt(time.Unix(0, fake.Now()))
	require.ErrorIs(t, err, ErrNotReadable)

	_, err = sess.ExecText(ctx, "START AT NOW TIME RATE 10;")
	require.NoError(t, err)
	for ev.Kind != EventTick {
		ev, err = sess.NextEvent(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, uint64(2), ev.Clock.Observed.Generation)
	c, _ = sess.Clock("prod")
	now, err := c.LogicalAt(time.Unix(0, fake.Now()).Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, time.Unix(0, fake.Now()).Add(10*time.Second).UTC(), now)

	// Detach: the clock is no longer followed.
	_, err = sess.ExecText(ctx, "DETACH DOMAIN CLOCK;")
	require.NoError(t, err)
	_, ok = sess.Clock("prod")
	require.False(t, ok)

	// A second session stays open; Engine.Close closes it.
	other, err := eng.NewSession()
	require.NoError(t, err)
	_, err = other.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	require.NoError(t, eng.Close())
	_, err = other.NextEvent(ctx)
	require.ErrorIs(t, err, ErrClosed)
	_, err = eng.NewSession()
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, eng.Close())
}

// A session's events report the frames the node delivered; the session
// lists the committed domains; a closed engine opens no session.
func TestSessionFramesAndDomainNames(t *testing.T) {
	eng, _ := openEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fs, err := eng.NewSession()
	require.NoError(t, err)
	_, err = fs.ExecText(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN dev; USE prod; START AT NOW; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	ev, err := fs.NextEvent(ctx)
	require.NoError(t, err)
	f := ev.Frame()
	require.Equal(t, "prod", f.Domain)
	require.Equal(t, uint64(1), f.Tick.ID)
	names, err := fs.DomainNames(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"prod", "dev"}, names)
	require.NoError(t, fs.Close())
	require.NoError(t, eng.Close())
	_, err = eng.NewSession()
	require.ErrorIs(t, err, ErrClosed)
}

// TestShowTransactionsOnEngineClock: an embedded session reads its open
// transaction's age from the engine's time source, never the wall clock.
func TestShowTransactionsOnEngineClock(t *testing.T) {
	eng, fake := openEngine(t)
	defer eng.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.ExecText(ctx, "CREATE DOMAIN dev; USE dev; BEGIN;")
	require.NoError(t, err)
	fake.Advance(90 * time.Minute)
	rs, err := sess.ExecText(ctx, "SHOW TRANSACTIONS;")
	require.ErrorIs(t, err, session.ErrTransactionExpired, "the engine's clock passed the idle timeout")
	require.Empty(t, rs)

	_, err = sess.ExecText(ctx, "BEGIN;")
	require.NoError(t, err)
	fake.Advance(3 * time.Minute)
	rs, err = sess.ExecText(ctx, "SHOW TRANSACTIONS;")
	require.NoError(t, err)
	require.Equal(t, "3m", rs[0].Set.Rows[0][rs[0].Set.Column("age")].String())
}
