package nspl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

func openVirtual(t *testing.T) (*Engine, *timesource.Virtual) {
	t.Helper()
	v := timesource.NewVirtual(timesource.DefaultVirtualStart)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := Open(ctx, Options{TimeSource: v, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, eng.Close()) })
	return eng, v
}

// followTicks runs setup on a fresh engine on virtual time and returns the
// first n clock events after it, each as its line and reading, and the
// followed clock of domain d.
func followTicks(t *testing.T, setup string, n int) ([]string, []ClockEvent, Clock) {
	t.Helper()
	eng, _ := openVirtual(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.ExecText(ctx, setup)
	require.NoError(t, err)
	var lines []string
	var ticks []ClockEvent
	for len(ticks) < n {
		ev, err := sess.NextEvent(ctx)
		require.NoError(t, err)
		lines = append(lines, fmt.Sprintf("%s reading %d authority %d", ev, ev.Clock.Reading, ev.Clock.Tick.AuthorityUTC))
		if ev.Kind == EventTick {
			ticks = append(ticks, ev)
		}
	}
	c, ok := sess.Clock("d")
	require.True(t, ok)
	return lines, ticks, c
}

// Under virtual time every tick arrives, one per boundary, in no wall time:
// ids 1 to N in order, each boundary origin + (id-1)×period, each
// authority reading the first instant at which the mapping reaches the
// boundary (the producer's timer fires exactly then), and the node's
// reading at that same instant. The same statements give the same events
// on every run.
func TestVirtualTimeDeliversEveryTickAtItsInstant(t *testing.T) {
	const n = 1000
	origin := timesource.DefaultVirtualStart // 2030-01-01T00:00:00Z
	for _, tc := range []struct {
		rate string
		// slack is the physical time of one logical nanosecond, rounded
		// up: the producer's wait is rounded up to whole nanoseconds
		// (clock.Mapping.Wait), so at a rate below 1 it may fire up to
		// that much after the instant the projection first reaches the
		// boundary, never before.
		slack time.Duration
	}{{"1", 1}, {"0.001", 1000}, {"1000", 1}} {
		rate := tc.rate
		t.Run("rate "+rate, func(t *testing.T) {
			setup := "CREATE PACED DOMAIN d WITH PERIOD 1h SKEW 0s; USE d; START AT '2030-01-01T00:00:00Z' TIME RATE " + rate + "; ATTACH DOMAIN CLOCK;"
			first, ticks, c := followTicks(t, setup, n)
			for i, ev := range ticks {
				id := uint64(i + 1)
				tk := ev.Clock.Tick
				require.Equal(t, id, tk.ID, "tick %d", i)
				require.Equal(t, origin+int64(i)*int64(time.Hour), tk.Boundary, "tick %d", id)
				at := time.Unix(0, tk.AuthorityUTC)
				logical, err := c.LogicalAt(at)
				require.NoError(t, err)
				require.GreaterOrEqual(t, logical.UnixNano(), tk.Boundary, "tick %d: produced before its boundary", id)
				if id > 1 { // tick 1 is due at START, the mapping's anchor
					before, err := c.LogicalAt(at.Add(-tc.slack))
					require.NoError(t, err)
					require.Less(t, before.UnixNano(), tk.Boundary, "tick %d: produced later than its boundary's first instant", id)
				}
				require.Equal(t, logical.UnixNano(), ev.Clock.Reading, "tick %d: the reading is taken at the tick's instant", id)
			}
			again, _, _ := followTicks(t, setup, n)
			require.Equal(t, first, again, "the same statements give the same events")
		})
	}
}

// Virtual time stands still while statements run and moves only when a
// session waits for an event; with nothing armed a wait fails at once
// instead of lasting forever.
func TestVirtualTimeMovesOnlyWhenASessionWaits(t *testing.T) {
	eng, v := openVirtual(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	require.True(t, eng.Virtual())

	require.ErrorIs(t, sess.Advance(ctx), ErrNoTimer, "nothing is armed")
	_, err = sess.NextEvent(ctx)
	require.ErrorIs(t, err, ErrNoTimer)

	_, err = sess.ExecText(ctx, "CREATE PACED DOMAIN d WITH PERIOD 1h SKEW 0s; USE d; ATTACH DOMAIN CLOCK; START AT NOW;")
	require.NoError(t, err)
	require.Equal(t, timesource.DefaultVirtualStart, v.Now(), "statements take no virtual time")

	seen := 0
	for seen < 2 {
		ev, err := sess.NextEvent(ctx)
		require.NoError(t, err)
		if ev.Kind == EventTick {
			seen++
		}
	}
	require.Equal(t, timesource.DefaultVirtualStart+int64(time.Hour), v.Now(), "tick 2 came one period on, and time stopped there")

	_, err = sess.ExecText(ctx, "STOP;")
	require.NoError(t, err)
	ev, err := sess.NextEvent(ctx)
	require.NoError(t, err)
	require.Equal(t, EventState, ev.Kind, "the stop")
	_, err = sess.NextEvent(ctx)
	require.ErrorIs(t, err, ErrNoTimer, "a stopped clock arms nothing")
	require.Equal(t, timesource.DefaultVirtualStart+int64(time.Hour), v.Now())
}

// A wait bounded by a timer on the virtual source ends when virtual time
// reaches it: the events before it arrive, and no wall time passes.
func TestVirtualTimeBoundedWait(t *testing.T) {
	eng, v := openVirtual(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.ExecText(ctx, "CREATE PACED DOMAIN d WITH PERIOD 1h SKEW 0s; USE d; ATTACH DOMAIN CLOCK; START AT NOW;")
	require.NoError(t, err)
	wctx, release := timesource.WithTimeout(ctx, v, 150*time.Minute)
	defer release()
	var got []string
	for {
		ev, err := sess.NextEvent(wctx)
		if err != nil {
			require.ErrorIs(t, context.Cause(wctx), context.DeadlineExceeded, "%v", err)
			break
		}
		got = append(got, ev.String())
	}
	require.Equal(t, timesource.DefaultVirtualStart+int64(150*time.Minute), v.Now())
	require.Len(t, got, 4, "%s", strings.Join(got, "\n"))
	require.Contains(t, got[3], "tick 3 at 2030-01-01T02:00:00Z")
}

func TestAdvanceOnRealTimeIsRefused(t *testing.T) {
	eng, _ := openEngine(t)
	defer eng.Close()
	sess, err := eng.NewSession()
	require.NoError(t, err)
	require.False(t, eng.Virtual())
	require.ErrorIs(t, sess.Advance(context.Background()), ErrRealTime)
	require.NoError(t, sess.Settle(context.Background()), "settling on real time is at once")
}
