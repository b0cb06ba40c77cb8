package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

// edge is one second before the last instant of signed Unix nanoseconds,
// so a paced rate-1 clock started there leaves the range a second after
// its anchor.
const edge = "'2262-04-11T23:47:15.854775807Z'"

// failureKind is what an error frame of one kind of authority failure
// says: its operation, code and sentinel, the arithmetic cause and the
// phrases of its typed report.
type failureKind struct {
	op, code string
	sentinel error
	cause    string
	phrases  []string
}

var (
	projectionFailure = failureKind{op: "project", code: "clock_overflow", sentinel: clockrt.ErrClockOverflow,
		cause:   "leaves signed unix nanoseconds",
		phrases: []string{"domain clock projection", "falls outside the signed Unix-nanosecond range"}}
	rateFailure = failureKind{op: "wait", code: "cannot_schedule", sentinel: clockrt.ErrCannotSchedule,
		cause:   "leaves unsigned 64-bit nanoseconds",
		phrases: []string{"cannot be scheduled as a physical wait at this rate"}}
)

// requireFailureFrame checks an error frame against the spec's typed
// report: the domain, the generation, the operation and the arithmetic
// cause, in a message that names the failure and its domain.
func requireFailureFrame(t *testing.T, f wire.Frame, domain string, generation uint64, want failureKind) {
	t.Helper()
	require.Equal(t, wire.FrameError, f.Kind, "frame %v", f)
	fl := f.Failure
	require.Equal(t, domain, fl.Domain)
	require.Equal(t, generation, fl.Generation)
	require.Equal(t, want.op, fl.Op)
	require.Equal(t, want.code, fl.Code)
	require.Contains(t, fl.Cause, want.cause)
	for _, ph := range want.phrases {
		require.Contains(t, fl.Message, ph)
	}
	require.Contains(t, fl.Message, `produce domain "`+domain+`"`)
	require.Contains(t, fl.Message, fl.Cause, "the arithmetic cause beneath the clock operation")
	require.ErrorIs(t, &fl, want.sentinel)
}

func describeFailure(t *testing.T, e *env) (string, wire.Value) {
	t.Helper()
	r := e.exec("DESCRIBE DOMAIN;")[0]
	return r.Message, r.Set.Rows[0][r.Set.Column("clock_failure")]
}

func clusterFailure(t *testing.T, e *env, domain string) wire.Value {
	t.Helper()
	set := e.exec("SHOW CLUSTER STATUS;")[0].Set
	for _, row := range set.Rows {
		if row[set.Column("kind")].Text() == "domain" && row[set.Column("name")].Text() == domain {
			return row[set.Column("clock_failure")]
		}
	}
	t.Fatalf("no row for domain %q", domain)
	return wire.Value{}
}

// A clock whose projection leaves the signed nanosecond range reaches its
// attached session as a typed error frame after its last tick, and
// DESCRIBE DOMAIN and SHOW CLUSTER STATUS show it until a new generation.
func TestClockFailureReachesTheAttachedSession(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT " + edge + ";")
	e.waitTick("prod", 1)
	r, c := attach(t, e)
	require.Equal(t, clock.Paced, r.Clock.State)
	f := read(t, e, c)
	require.Equal(t, wire.FrameTick, f.Kind)
	_, v := describeFailure(t, e)
	require.True(t, v.IsNull(), "no failure before the projection leaves the range")

	// The producer wakes only past the range: its projection fails.
	e.parked(time.Second)
	e.fake.Advance(2 * time.Second)
	f = read(t, e, c)
	requireFailureFrame(t, f, "prod", 1, projectionFailure)
	require.Equal(t, r.Attachment, f.Attachment)

	msg, v := describeFailure(t, e)
	require.Equal(t, f.Failure.Message, v.Text())
	require.Contains(t, msg, "its clock failed: "+f.Failure.Message)
	require.Equal(t, f.Failure.Message, clusterFailure(t, e, "prod").Text())

	// A session attaching later receives the failure right after its reply.
	late := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, late.Close()) })
	_, err := late.ExecText(e.ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	lf, err := late.NextFrame(e.ctx)
	require.NoError(t, err)
	if lf.Kind == wire.FrameTick {
		lf, err = late.NextFrame(e.ctx)
		require.NoError(t, err)
	}
	require.Equal(t, f.Failure, lf.Failure)

	// A new generation clears it and is delivered as a state.
	e.exec("DETACH DOMAIN CLOCK; STOP; START AT NOW; ATTACH DOMAIN CLOCK;")
	_, v = describeFailure(t, e)
	require.True(t, v.IsNull(), "a new generation clears the failure")
	require.True(t, clusterFailure(t, e, "prod").IsNull())
}

// The failure holds one slot on the control lane behind the generation's
// state: a new generation published before it is taken keeps the order.
func TestClockFailureFollowsItsState(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT " + edge + ";")
	e.waitTick("prod", 1)
	_, c := attach(t, e)
	e.parked(time.Second)
	e.fake.Advance(2 * time.Second)
	e.waitQueued("the error frame", func(f wire.Frame) bool { return f.Kind == wire.FrameError })
	e.exec("STOP; START AT NOW;")
	var kinds []wire.FrameKind
	for {
		f := read(t, e, c)
		kinds = append(kinds, f.Kind)
		if f.Kind == wire.FrameState && f.Clock.Generation == 2 && f.Clock.State == clock.Paced {
			break
		}
	}
	require.Contains(t, kinds, wire.FrameError)
}

// A rate at which no physical wait reaches the next tick is a failure
// like the projection's: the session attached before START receives the
// generation, its first tick and then the typed error frame, and DESCRIBE
// DOMAIN shows the same report.
func TestRateConversionFailureReachesTheAttachedSession(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	r, c := attach(t, e)
	require.Equal(t, clock.Stopped, r.Clock.State)
	// One logical second at rate 1e-11 is 10^20 physical nanoseconds.
	e.exec("START AT NOW TIME RATE 0.00000000001;")
	var kinds []wire.FrameKind
	f := read(t, e, c)
	for f.Kind != wire.FrameError {
		kinds = append(kinds, f.Kind)
		if f.Kind == wire.FrameTick {
			require.Equal(t, uint64(1), f.Tick.ID)
		}
		f = read(t, e, c)
	}
	require.Contains(t, kinds, wire.FrameTick, "tick 1 comes before the failure")
	requireFailureFrame(t, f, "prod", 1, rateFailure)
	require.Equal(t, r.Attachment, f.Attachment)

	_, v := describeFailure(t, e)
	require.Equal(t, f.Failure.Message, v.Text())
	require.Equal(t, f.Failure.Message, clusterFailure(t, e, "prod").Text())
}
