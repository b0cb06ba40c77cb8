package clock

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func pacedObserved(rate float64) Observed {
	return Observed{Generation: 3, State: Paced, Period: 1_000_000_000, Skew: 100_000_000,
		LogicalStart: 5_000_000_000, WallStartedAt: 1_000_000_000_000, Rate: rate}
}

func TestObservedComparable(t *testing.T) {
	a, b := pacedObserved(2), pacedObserved(2)
	require.True(t, a == b)
	b.Rate = math.Nextafter(2, 3)
	require.False(t, a == b)
	require.Equal(t, "paced", Paced.String())
	require.Equal(t, "stopped", Stopped.String())
	require.Equal(t, "uninstalled", Uninstalled.String())
	require.Equal(t, "unpaced", Unpaced.String())
	require.Equal(t, "ObservedState(9)", ObservedState(9).String())
	require.Equal(t, Observed{}, Observed{State: Stopped}, "the zero value is a never-started stopped clock")
}

func TestObservedLogicalAt(t *testing.T) {
	o := pacedObserved(2)
	m, ok := o.Mapping()
	require.True(t, ok)
	for _, utc := range []int64{math.MinInt64, o.WallStartedAt - 1, o.WallStartedAt, o.WallStartedAt + 1, o.WallStartedAt + 7_777_777} {
		want, werr := m.Project(utc)
		got, err := o.LogicalAt(utc)
		require.Equal(t, werr, err)
		require.Equal(t, want, got, "utc %d", utc)
	}
	got, err := o.LogicalAt(o.WallStartedAt + 3)
	require.NoError(t, err)
	require.Equal(t, o.LogicalStart+6, got)

	un := Observed{Generation: 1, State: Unpaced}
	_, ok = un.Mapping()
	require.False(t, ok)
	got, err = un.LogicalAt(42)
	require.NoError(t, err)
	require.Equal(t, int64(42), got)

	for _, s := range []ObservedState{Stopped, Uninstalled} {
		o := Observed{Generation: 1, State: s}
		require.False(t, o.Readable())
		_, err := o.LogicalAt(0)
		require.ErrorIs(t, err, ErrNotReadable)
		require.Contains(t, err.Error(), s.String())
		_, err = o.WaitUntil(0, 1)
		require.ErrorIs(t, err, ErrNotReadable)
		_, err = o.WindowAt(0)
		require.ErrorIs(t, err, ErrNotReadable)
	}
	require.True(t, un.Readable())
	require.True(t, o.Readable())

	overflow := pacedObserved(1e300)
	_, err = overflow.LogicalAt(overflow.WallStartedAt + 1)
	require.ErrorIs(t, err, ErrOverflow)
}

func TestObservedWaitUntil(t *testing.T) {
	o := pacedObserved(3)
	cases := []struct {
		name   string
		utc    int64
		target int64
		want   uint64
	}{
		{name: "already reached", utc: o.WallStartedAt, target: o.LogicalStart, want: 0},
		{name: "in the past", utc: o.WallStartedAt + 10, target: o.LogicalStart, want: 0},
		{name: "one logical ns ahead rounds up", utc: o.WallStartedAt, target: o.LogicalStart + 1, want: 1},
		{name: "exact", utc: o.WallStartedAt, target: o.LogicalStart + 3, want: 1},
		{name: "just past exact", utc: o.WallStartedAt, target: o.LogicalStart + 4, want: 2},
		{name: "before anchor", utc: o.WallStartedAt - 100, target: o.LogicalStart + 3, want: 1},
	}
	m, _ := o.Mapping()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := o.WaitUntil(tc.utc, tc.target)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			cur, err := m.Project(tc.utc)
			require.NoError(t, err)
			ref, err := m.Wait(cur, tc.target)
			require.NoError(t, err)
			require.Equal(t, ref, got, "same arithmetic as Mapping.Wait")
		})
	}
	_, err := pacedObserved(math.SmallestNonzeroFloat64).WaitUntil(0, math.MaxInt64)
	require.ErrorIs(t, err, ErrOverflow)

	un := Observed{Generation: 1, State: Unpaced}
	for _, tc := range []struct {
		utc, target int64
		want        uint64
	}{
		{10, 10, 0}, {10, 9, 0}, {10, 11, 1},
		{math.MinInt64, math.MaxInt64, math.MaxUint64},
	} {
		got, err := un.WaitUntil(tc.utc, tc.target)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestObservedWindowAt(t *testing.T) {
	o := pacedObserved(1)
	for _, utc := range []int64{o.WallStartedAt - 1, o.WallStartedAt, o.WallStartedAt + 2_500_000_000, o.WallStartedAt + 1_000_000_000_000} {
		got, err := o.WindowAt(utc)
		require.NoError(t, err)
		now, err := o.LogicalAt(utc)
		require.NoError(t, err)
		want, err := NewWindow(o.LogicalStart, o.Period, o.Skew, now)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := Observed{Generation: 1, State: Unpaced}.WindowAt(0)
	require.ErrorIs(t, err, ErrNotReadable)
	require.Contains(t, err.Error(), "unpaced")

	bad := pacedObserved(1)
	bad.Period = 0
	_, err = bad.WindowAt(bad.WallStartedAt)
	require.True(t, errors.Is(err, ErrInvalidPeriod))
}
