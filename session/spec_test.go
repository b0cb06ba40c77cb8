package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// Delivery queues a state frame only when the observed clock changed: a
// catalog change that leaves the domain's installation equal (ALTER DOMAIN
// SET PLACEMENT, a no-op CREATE IF NOT EXISTS, another domain's CREATE)
// sends nothing, and the next frame is the next tick. A run of the
// delivery task after the change, as the fan-out starts on a replaced
// installation, finds the tick the client took still the newest and does
// not offer it again: delivered ids increase.
func TestSpecNoStateFrameWithoutAClockChange(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"alter placement", "ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;"},
		{"create if not exists on the domain", "CREATE IF NOT EXISTS PACED DOMAIN prod WITH PERIOD 1s SKEW 0s;"},
		{"another domain", "CREATE DOMAIN other;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
			e.waitTick("prod", 1)
			_, c := attach(t, e)
			f := read(t, e, c)
			require.Equal(t, wire.FrameTick, f.Kind)
			require.Equal(t, uint64(1), f.Tick.ID)

			before, err := e.node.Domain("prod")
			require.NoError(t, err)
			e.exec(tc.text)
			after, err := e.node.Domain("prod")
			require.NoError(t, err)
			require.Equal(t, before.Generation, after.Generation)
			wakeAndWait(e.attachment("prod"))
			require.Zero(t, e.sess.Pending(), "a run of delivery after a change that keeps the clock queued a frame")

			e.advance(time.Second, "prod", 2)
			f = read(t, e, c)
			require.Equal(t, wire.FrameTick, f.Kind, "a change that keeps the clock sends no state frame: %v", f)
			require.Equal(t, uint64(2), f.Tick.ID)
		})
	}
}

// Changes published while a state frame waits for room on the control lane
// collapse: with the lane full, STOP; START; STOP; START; reaches the client
// as at most one intermediate state and then the newest clock, never as one
// frame per change.
func TestSpecStateChangesCollapseIntoNewest(t *testing.T) {
	e := newEnv(t, Options{LaneCapacity: 1})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	r, c := attach(t, e)
	require.Equal(t, clock.Observed{State: clock.Stopped}, *r.Clock)

	// The paced state of generation 1 fills the lane; nothing reads it yet.
	e.exec("START AT NOW;")
	e.waitQueued("the state frame of generation 1", func(f wire.Frame) bool {
		return f.Kind == wire.FrameState && f.Clock.Generation == 1 && f.Clock.State == clock.Paced
	})
	e.exec("STOP; START AT NOW; STOP; START AT NOW;")
	e.waitTick("prod", 1)
	d, err := e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, uint64(3), d.Generation)

	var states []clock.Observed
	for {
		f := read(t, e, c)
		if f.Kind == wire.FrameState {
			states = append(states, f.Clock)
		}
		if f.Kind == wire.FrameTick && f.Tick.Generation == 3 {
			break
		}
	}
	require.Equal(t, uint64(1), states[0].Generation)
	require.Equal(t, clock.Paced, states[0].State)
	last := states[len(states)-1]
	require.Equal(t, uint64(3), last.Generation)
	require.Equal(t, clock.Paced, last.State)
	require.LessOrEqual(t, len(states), 3, "four changes behind a full lane collapse into the newest: %v", states)
}

// An attach whose domain the node's installed committed state lacks is
// refused as not found, and nothing is attached.
func TestSpecAttachRefusesAMissingDomain(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN prod; USE prod;")
	// Dropped through another session, the domain stays this session's
	// active one.
	other := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	_, err := other.ExecText(e.ctx, "DROP DOMAIN prod;")
	require.NoError(t, err)
	err = e.fail("ATTACH DOMAIN CLOCK;")
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)
	require.Contains(t, err.Error(), "domain 'prod' does not exist")
	require.Empty(t, e.sess.Attached())
	require.Zero(t, e.sess.Pending())
}
