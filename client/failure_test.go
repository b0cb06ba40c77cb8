package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// A remote session receives its clock's failure as the typed error frame
// and error event a local one does, and DESCRIBE DOMAIN shows it.
func TestRemoteClockFailure(t *testing.T) {
	e := newEnv(t, "")
	c := e.dial(Config{})
	// One second before the last instant of signed Unix nanoseconds.
	exec(t, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT '2262-04-11T23:47:15.854775807Z'; ATTACH DOMAIN CLOCK;")
	require.NoError(t, e.fake.BlockUntilDue(ctxT(t), time.Second), "the producer waits for its second tick")
	e.fake.Advance(2 * time.Second)

	var ev follow.ClockEvent
	for ev.Kind != follow.EventError {
		var err error
		ev, err = c.NextEvent(ctxT(t))
		require.NoError(t, err)
		require.NotEqual(t, follow.EventEnd, ev.Kind)
	}
	f := ev.Frame()
	require.Equal(t, wire.FrameError, f.Kind)
	require.Equal(t, "prod", f.Failure.Domain)
	require.Equal(t, uint64(1), f.Failure.Generation)
	require.Equal(t, "project", f.Failure.Op)
	require.Contains(t, f.Failure.Message, "domain clock projection")
	require.Contains(t, f.Failure.Message, "falls outside the signed Unix-nanosecond range")
	require.Contains(t, f.Failure.Message, f.Failure.Cause)

	require.Equal(t, f.Failure, *ev.Failure)
	require.ErrorIs(t, ev.Failure, clockrt.ErrClockOverflow)
	cl, ok := c.Clock("prod")
	require.True(t, ok)
	require.Equal(t, f.Failure, *cl.Failure)

	r := exec(t, c, "DESCRIBE DOMAIN;")[0]
	require.Equal(t, f.Failure.Message, r.Set.Rows[0][r.Set.Column("clock_failure")].Text())
}
