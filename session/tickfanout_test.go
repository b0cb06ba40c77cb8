package session

import (
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

// fanoutCount returns the number of running tick fan-outs.
func fanoutCount() int {
	fanouts.mu.Lock()
	defer fanouts.mu.Unlock()
	return len(fanouts.m)
}

// The attachments of one installed domain share one tick fan-out, across
// sessions: a detach leaves the other attachment ticking, the last release
// stops the fan-out, and a domain created again under the same name is a new
// allocation whose ticks reach its new attachments, not the ended ones.
func TestTickFanoutFollowsTheAllocation(t *testing.T) {
	e := newEnv(t, Options{})
	before := fanoutCount()
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	_, c := attach(t, e)
	other := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	rs, err := other.ExecText(e.ctx, "USE prod; ATTACH DOMAIN CLOCK;")
	require.NoError(t, err)
	oc := newOrderChecker(t, rs[1])
	readOther := func() wire.Frame { return readStream(t, e.ctx, other, oc) }
	require.Equal(t, before+1, fanoutCount(), "one fan-out for both attachments")
	require.Equal(t, uint64(1), read(t, e, c).Tick.ID)
	require.Equal(t, uint64(1), readOther().Tick.ID)

	e.exec("DETACH DOMAIN CLOCK;")
	e.advance(time.Second, "prod", 2)
	require.Equal(t, uint64(2), readOther().Tick.ID, "the detach left the other attachment ticking")
	require.Equal(t, before+1, fanoutCount())

	_, err = other.ExecText(e.ctx, "DETACH DOMAIN CLOCK;")
	require.NoError(t, err)
	require.Equal(t, before, fanoutCount(), "the last release stops the fan-out")

	// Attached again, dropped and created again: the new domain's ticks
	// reach the new attachment.
	_, c = attach(t, e)
	e.exec("STOP; DROP DOMAIN prod;")
	for f := read(t, e, c); f.Kind != wire.FrameEnd; f = read(t, e, c) {
	}
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	_, c = attach(t, e)
	e.advance(time.Second, "prod", 2)
	var f wire.Frame
	for f.Kind != wire.FrameTick || f.Tick.ID < 2 {
		f = read(t, e, c)
	}
	require.Equal(t, uint64(2), f.Tick.ID)
}

// idle waits until the attachment's delivery task has ended on its own,
// and its context with it.
func idle(t *testing.T, e *env, a *attachment) {
	t.Helper()
	for {
		a.mu.Lock()
		running, cancel := a.running, a.cancel
		a.mu.Unlock()
		if !running {
			require.Nil(t, cancel, "an idle attachment keeps no context")
			return
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("the delivery task of an idle attachment did not end")
		default:
			goruntime.Gosched()
		}
	}
}

// An idle attachment holds no goroutine: its delivery task ends once it
// has caught up, ticks reach it through the fan-out, and a change of
// installation starts the task again.
func TestIdleAttachmentHoldsNoTask(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	_, c := attach(t, e)
	e.sess.mu.Lock()
	a := e.sess.attachmentLocked("prod")
	e.sess.mu.Unlock()
	idle(t, e, a)

	e.exec("START AT NOW;")
	f := read(t, e, c)
	require.Equal(t, wire.FrameState, f.Kind, "the installation started the task again")
	e.waitTick("prod", 1)
	for f.Kind != wire.FrameTick {
		f = read(t, e, c)
	}
	idle(t, e, a)
	e.advance(time.Second, "prod", 2)
	require.Equal(t, uint64(2), read(t, e, c).Tick.ID, "the fan-out delivers ticks while no task runs")
	idle(t, e, a)
	e.exec("DETACH DOMAIN CLOCK;")
}
