package node

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testlog"
	"github.com/nspl-dev/nspl/planner"
)

// The warnings an operator reads when a clock fails at its authority.
const (
	producerStopped = "tick producer stopped producing"
	failedAtAuthor  = "domain clock failed at its authority"
)

// waitFailure waits, on the observer's notifications, until the node has
// accepted a clock failure of the domain's installed generation.
func waitFailure(t *testing.T, n *Node, domain string) *clockrt.ClockFailure {
	t.Helper()
	o, err := n.Observe(domain)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		obs := o.Read()
		if obs.Failure != nil {
			return obs.Failure
		}
		require.NoError(t, o.Wait(ctx), "waiting for the clock failure of %q, have %+v", domain, obs)
	}
}

// openLogged opens a node on fake that logs everything into logs.
func openLogged(t *testing.T, fake *timesource.Fake, logs *testlog.Buffer) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{Logger: logs.Logger(slog.LevelDebug), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	require.NoError(t, n.WaitInstalled(ctx))
	return n
}

// A clock failure reaches the operator of every node as one warning whose
// error is the full typed report: the authority's producer logs it under
// the node's name, and a node that accepts the authority's report logs it
// as the authority sent it, once per generation.
func TestClockFailureWarnings(t *testing.T) {
	t.Run("the authority's producer", func(t *testing.T) {
		fake := timesource.NewFake(t0)
		var logs testlog.Buffer
		n := openLogged(t, fake, &logs)
		ctx := context.Background()
		_, err := n.CreateDomain(ctx, paced("p", time.Second, 0))
		require.NoError(t, err)
		// One second of logical time at rate 1e-11 is 10^20 physical
		// nanoseconds: the producer emits tick 1 and cannot wait for 2.
		_, err = n.Start(ctx, "p", planner.Start{Mode: planner.StartAtNow, Rate: 1e-11}.Request())
		require.NoError(t, err)
		fl := waitFailure(t, n, "p")
		require.Equal(t, uint64(1), n.registry.Progress("p").ID, "tick 1 is accepted with the failure")
		require.Equal(t, "wait", fl.Op)
		require.Equal(t, "cannot_schedule", fl.Code)
		require.ErrorIs(t, fl, clockrt.ErrCannotSchedule)
		require.Contains(t, fl.Message, `produce domain "p" generation 1`)
		require.Contains(t, fl.Message, fl.Cause)
		f, ok := clockrt.FenceOf(n.registry.Current("p"))
		require.True(t, ok)

		// The producer logged its warning before it emitted the report the
		// node accepted.
		warnings := logs.Records(t, producerStopped)
		require.Len(t, warnings, 1)
		w := warnings[0]
		require.Equal(t, "WARN", w.Get(slog.LevelKey))
		require.Equal(t, DefaultName, w.Get("node_name"))
		require.Equal(t, "p", w.Get("domain"))
		require.Equal(t, "1", w.Get("generation"))
		require.Equal(t, f.Authority.String(), w.Get("authority"))
		require.Equal(t, "wait", w.Get("op"))
		require.Equal(t, fl.Message, w.Get("err"), "the warning renders the full typed report")
		require.Empty(t, logs.Records(t, failedAtAuthor), "the authority logs its own failure once")
	})

	t.Run("a report accepted from the authority", func(t *testing.T) {
		fake := timesource.NewFake(t0)
		var logs testlog.Buffer
		n := openLogged(t, fake, &logs)
		ctx := context.Background()
		_, err := n.CreateDomain(ctx, paced("p", time.Second, 0))
		require.NoError(t, err)
		_, err = n.Start(ctx, "p", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
		require.NoError(t, err)
		waitTick(t, n, "p", 1)
		f, ok := clockrt.FenceOf(n.registry.Current("p"))
		require.True(t, ok)

		// The report as a producer renders a failed rate conversion.
		_, cause := (clock.Mapping{Rate: 1e-11}).WaitDelta(uint64(time.Second))
		require.Error(t, cause)
		cerr := &clockrt.ClockError{Op: "produce", Domain: "p", Generation: f.Generation, Err: clockrt.ErrCannotSchedule, Cause: cause}
		rep := clockrt.ProgressReport{Domain: "p", Generation: f.Generation, Authority: f.Authority, Period: f.Period,
			Failure: &clockrt.ClockFailure{Domain: "p", Generation: f.Generation, Op: "wait", Code: "cannot_schedule",
				Cause: cause.Error(), Message: cerr.Error()}}
		for i := range 2 {
			ok, err := n.AcceptProgress(f.Authority.Node, rep)
			require.NoError(t, err)
			require.Equal(t, i == 0, ok, "the failure is retained once per generation")
		}
		warnings := logs.Records(t, failedAtAuthor)
		require.Len(t, warnings, 1, "logged once per generation")
		w := warnings[0]
		require.Equal(t, "WARN", w.Get(slog.LevelKey))
		require.Equal(t, DefaultName, w.Get("node_name"))
		require.Equal(t, "p", w.Get("domain"))
		require.Equal(t, "1", w.Get("generation"))
		require.Equal(t, f.Authority.Node, w.Get("authority"))
		require.Equal(t, "wait", w.Get("op"))
		require.Equal(t, cerr.Error(), w.Get("err"), "the warning renders the full typed report as the authority sent it")
	})
}
