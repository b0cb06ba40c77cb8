package timesource

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDefaultVirtualStartIs2030(t *testing.T) {
	require.Equal(t, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), DefaultVirtualStart)
}

func TestVirtualStepFiresTheTimersOfTheEarliestDeadline(t *testing.T) {
	tests := []struct {
		name   string
		arm    []time.Duration // in arming order
		wantAt []time.Duration // monotonic reading after each Step
		wantIx [][]int         // indexes (arming order) of the timers each Step fired
	}{
		{"one", []time.Duration{time.Hour}, []time.Duration{time.Hour}, [][]int{{0}}},
		{"deadline order", []time.Duration{3 * time.Second, time.Second, 2 * time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, [][]int{{1}, {2}, {0}}},
		{"ties together", []time.Duration{time.Second, 2 * time.Second, time.Second},
			[]time.Duration{time.Second, 2 * time.Second}, [][]int{{0, 2}, {1}}},
		{"one nanosecond apart is not a tie", []time.Duration{time.Second, time.Second + 1},
			[]time.Duration{time.Second, time.Second + 1}, [][]int{{0}, {1}}},
		{"one nanosecond", []time.Duration{1}, []time.Duration{1}, [][]int{{0}}},
		{"largest duration", []time.Duration{time.Duration(1<<63 - 1)}, []time.Duration{time.Duration(1<<63 - 1)}, [][]int{{0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := NewVirtual(base)
			timers := make([]Timer, len(tc.arm))
			for i, d := range tc.arm {
				timers[i] = v.NewTimer(d)
			}
			for step, at := range tc.wantAt {
				require.True(t, v.Step())
				require.Equal(t, at, v.Monotonic())
				for i, tm := range timers {
					got, ok := received(tm.C())
					if slices.Contains(tc.wantIx[step], i) {
						require.True(t, ok, "step %d fires timer %d", step, i)
						require.Equal(t, v.Now(), got.UnixNano())
						tm.Stop()
					} else {
						require.False(t, ok, "step %d fires timers %v only, not %d", step, tc.wantIx[step], i)
					}
				}
			}
			require.False(t, v.Step(), "nothing is left armed")
		})
	}
}

func TestVirtualStepMovesUTCWithTheMonotonicClock(t *testing.T) {
	v := NewVirtual(DefaultVirtualStart)
	v.NewTimer(time.Hour)
	require.True(t, v.Step())
	require.Equal(t, DefaultVirtualStart+int64(time.Hour), v.Now())
	require.Equal(t, Reading{Wall: DefaultVirtualStart + int64(time.Hour), Mono: time.Hour}, v.Paired())
	require.Zero(t, v.PairTolerance())
}

func TestVirtualStepWithNothingArmedChangesNothing(t *testing.T) {
	v := NewVirtual(base)
	require.False(t, v.Step())
	require.Equal(t, base, v.Now())
	tm := v.NewTimer(time.Second)
	require.True(t, tm.Stop())
	require.False(t, v.Step(), "a stopped timer is not armed")
	require.Equal(t, base, v.Now())
	_, ok := v.Next()
	require.False(t, ok)
}

func TestVirtualFiringIsOutstandingUntilResetOrStopped(t *testing.T) {
	tests := []struct {
		name   string
		settle func(Timer)
	}{
		{"reset", func(tm Timer) { tm.Reset(time.Second) }},
		{"stop", func(tm Timer) { tm.Stop() }},
		{"reset to fire at once, then stop", func(tm Timer) { tm.Reset(0); tm.Stop() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := NewVirtual(base)
			require.True(t, v.Settled(), "nothing has fired")
			tm := v.NewTimer(time.Second)
			require.True(t, v.Settled(), "armed, not fired")
			require.True(t, v.Step())
			require.False(t, v.Settled(), "fired, its owner has not come back")
			<-tm.C()
			require.False(t, v.Settled(), "received is not settled: the owner may still read the time")
			tc.settle(tm)
			require.True(t, v.Settled())
		})
	}
}

func TestVirtualTimerArmedAtOrBeforeNowFiresAtOnceAndIsOutstanding(t *testing.T) {
	for _, d := range []time.Duration{-1, 0} {
		v := NewVirtual(base)
		tm := v.NewTimer(d)
		_, ok := received(tm.C())
		require.True(t, ok, "d=%s fires at once", d)
		require.False(t, v.Settled())
		tm.Stop()
		require.True(t, v.Settled())
		require.Equal(t, base, v.Now(), "firing at once moves no time")
	}
	// Just after now: armed, fires on the next Step, one nanosecond later.
	v := NewVirtual(base)
	tm := v.NewTimer(1)
	_, ok := received(tm.C())
	require.False(t, ok)
	require.True(t, v.Settled())
	require.True(t, v.Step())
	require.Equal(t, base+1, v.Now())
}
