package clockrt

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// failed returns a failure report for generation gen under fenceA,
// repeating tick id (0: no tick was emitted).
func failed(gen, id uint64) ProgressReport {
	rep := ProgressReport{Domain: "d", Generation: gen, Authority: fenceA, Period: uint64(second)}
	if id != 0 {
		rep = report(gen, id, base)
	}
	rep.Failure = &ClockFailure{Domain: "d", Generation: gen, Op: "project", Code: "clock_overflow",
		Cause: "clock: project: result leaves signed unix nanoseconds", Message: `produce domain "d": domain clock projection falls outside the signed Unix-nanosecond range`}
	return rep
}

func TestAcceptProgressFailure(t *testing.T) {
	cases := []struct {
		name string
		from string
		rep  func() ProgressReport
		want error // nil: accepted and retained
	}{
		{name: "without a tick", from: "a", rep: func() ProgressReport { return failed(1, 0) }},
		{name: "with the newest tick", from: "a", rep: func() ProgressReport { return failed(1, 3) }},
		{name: "from another node", from: "b", rep: func() ProgressReport { return failed(1, 0) }, want: ErrProgressFence},
		{name: "of another generation", from: "a", rep: func() ProgressReport { return failed(2, 0) }, want: ErrProgressFence},
		{name: "of another authority revision", from: "a", rep: func() ProgressReport {
			r := failed(1, 0)
			r.Authority.Revision = 2
			return r
		}, want: ErrProgressFence},
		{name: "naming another domain", from: "a", rep: func() ProgressReport {
			r := failed(1, 0)
			r.Failure.Domain = "e"
			return r
		}, want: ErrInvalidProgress},
		{name: "naming another generation", from: "a", rep: func() ProgressReport {
			r := failed(1, 0)
			r.Failure.Generation = 2
			return r
		}, want: ErrInvalidProgress},
		{name: "without a report", from: "a", rep: func() ProgressReport {
			r := failed(1, 0)
			r.Failure.Message = ""
			return r
		}, want: ErrInvalidProgress},
		{name: "with an implausible tick", from: "a", rep: func() ProgressReport {
			r := failed(1, 3)
			r.Boundary++
			return r
		}, want: ErrImplausibleProgress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			install(t, r, "d", paced(1, 1, 1))
			o, err := r.Observe("d")
			require.NoError(t, err)
			require.Nil(t, o.Read().Failure)
			rep := tc.rep()
			accepted, err := r.AcceptProgress(tc.from, rep)
			if tc.want != nil {
				requireClockErr(t, err, tc.want, "d")
				require.False(t, accepted)
				require.Nil(t, r.ClockFailure("d"))
				require.False(t, woken(o))
				return
			}
			require.NoError(t, err)
			require.True(t, accepted)
			require.Equal(t, rep.Failure, r.ClockFailure("d"))
			require.NotSame(t, rep.Failure, r.ClockFailure("d"), "the registry keeps its own copy")
			require.True(t, woken(o), "an accepted failure wakes the observer")
			obs := o.Read()
			require.Equal(t, rep.Failure, obs.Failure)
			require.Equal(t, rep.Tick().ID, obs.Tick.ID)

			again, err := r.AcceptProgress(tc.from, rep)
			require.NoError(t, err)
			require.False(t, again, "the generation's failure is retained once")
			require.False(t, woken(o))
		})
	}
}

func TestClockFailureClearing(t *testing.T) {
	moved := paced(1, 1, 2)
	moved.Authority = fenceB
	cases := []struct {
		name    string
		change  func(r *Registry)
		cleared bool
	}{
		{name: "new generation", change: func(r *Registry) { install(t, r, "d", paced(2, 1, 2)) }, cleared: true},
		{name: "stop", change: func(r *Registry) { install(t, r, "d", stopped(1, 2)) }, cleared: true},
		{name: "removal", change: func(r *Registry) { r.Remove("d") }, cleared: true},
		{name: "authority move keeps it", change: func(r *Registry) { install(t, r, "d", moved) }},
		{name: "authority revoked keeps it", change: func(r *Registry) { install(t, r, "d", uninstalled(1, 2)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			install(t, r, "d", paced(1, 1, 1))
			_, err := r.AcceptProgress("a", failed(1, 0))
			require.NoError(t, err)
			o, err := r.Observe("d")
			require.NoError(t, err)
			o.Read()
			tc.change(r)
			require.True(t, woken(o))
			if tc.cleared {
				require.Nil(t, r.ClockFailure("d"))
				require.Nil(t, o.Read().Failure)
				return
			}
			require.NotNil(t, r.ClockFailure("d"))
			require.NotNil(t, o.Read().Failure)
		})
	}
}
