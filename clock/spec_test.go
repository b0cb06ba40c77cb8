package clock

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecRateDoesNotScaleWindow holds that TIME RATE changes only when the
// frontier advances in physical time: a clock at any rate, read at the
// physical instant where it reaches a given logical time, has the same
// window as a clock at rate 1 there. Its centers are PERIOD apart and its
// tolerance is SKEW, both in logical nanoseconds, whatever the rate.
func TestSpecRateDoesNotScaleWindow(t *testing.T) {
	const period, skew = 1 * second, 100 * millisecond
	base := pacedObserved(1)
	base.Period, base.Skew = period, skew
	for _, tc := range []struct {
		name string
		rate float64
		// elapsed is the physical time after the anchor at which the
		// clock reaches 10.5 s of logical time past its origin.
		elapsed int64
	}{
		{name: "rate 1", rate: 1, elapsed: 10*second + 500*millisecond},
		{name: "rate 60", rate: 60, elapsed: 175 * millisecond},
		{name: "rate 0.5", rate: 0.5, elapsed: 21 * second},
		{name: "rate 1000", rate: 1000, elapsed: 10*millisecond + 500_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Rate = tc.rate
			now, err := o.LogicalAt(o.WallStartedAt + tc.elapsed)
			require.NoError(t, err)
			require.Equal(t, o.LogicalStart+10*second+500*millisecond, now)

			w, err := o.WindowAt(o.WallStartedAt + tc.elapsed)
			require.NoError(t, err)
			require.Equal(t, uint64(10), w.Frontier())
			require.Equal(t, o.LogicalStart, w.FirstCenter())
			require.Equal(t, o.LogicalStart+10*period, w.LastCenter(), "centers are PERIOD apart in logical time")
			last := w.LastCenter()
			require.True(t, w.Admit(last+skew), "tolerance is SKEW in logical time")
			require.False(t, w.Admit(last+skew+1))
			require.True(t, w.Admit(last-period-skew))
			require.False(t, w.Admit(last-period-skew-1))
			require.False(t, w.Admit(last+period), "the next center is not reached yet")

			want, err := NewWindow(o.LogicalStart, period, skew, now)
			require.NoError(t, err)
			require.Equal(t, want, w)
		})
	}
}
