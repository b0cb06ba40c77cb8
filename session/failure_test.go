package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/runtime"
	"github.com/nspl-dev/nspl/wire"
)

// edge is one second before the last instant of signed Unix nanoseconds,
// so a paced rate-1 clock started there leaves the range a second after
// its anchor.
const edge = "'2262-04-11T23:47:15.854775807Z'"

// requireFailureFrame checks an error frame against the spec's typed
// report: the domain, the generation, the operation and the arithmetic
// cause, in a message that names the projection and the range it left.
func requireFailureFrame(t *testing.T, f wire.Frame, domain string, generation uint64) {
	t.Helper()
	require.Equal(t, wire.FrameError, f.Kind, "frame %v", f)
	fl := f.Failure
	require.Equal(t, domain, fl.Domain)
	require.Equal(t, generation, fl.Generation)
	require.Equal(t, "project", fl.Op)
	require.Equal(t, "clock_overflow", fl.Code)
	require.Contains(t, fl.Cause, "leaves signed unix nanoseconds")
	require.Contains(t, fl.Message, "domain clock projection")
	require.Contains(t, fl.Message, "leaves the signed Unix-nanosecond range")
	require.Contains(t, fl.Message, `domain "`+domain+`"`)
	require.Contains(t, fl.Message, fl.Cause, "the arithmetic cause beneath the clock operation")
	require.ErrorIs(t, &fl, runtime.ErrClockOverflow)
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
	requireFailureFrame(t, f, "prod", 1)
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
