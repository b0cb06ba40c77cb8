package wire

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValueTimeAndDuration: a timestamp reads as its UTC time.Time at the
// ends of the signed range, a duration as a time.Duration up to
// time.Duration's range and not past it, and other kinds as nothing.
func TestValueTimeAndDuration(t *testing.T) {
	for _, ns := range []int64{0, 1, -1, math.MinInt64, math.MaxInt64, 1767225600 * int64(time.Second)} {
		got := Timestamp(ns).Time()
		require.Equal(t, ns, got.UnixNano(), "%d", ns)
		require.Equal(t, time.UTC, got.Location())
	}
	require.True(t, Uint(5).Time().IsZero())
	require.True(t, Null().Time().IsZero())

	for _, tc := range []struct {
		ns   uint64
		want time.Duration
		ok   bool
	}{
		{0, 0, true},
		{1500 * uint64(time.Millisecond), 1500 * time.Millisecond, true},
		{math.MaxInt64 - 1, math.MaxInt64 - 1, true},
		{math.MaxInt64, math.MaxInt64, true},
		{math.MaxInt64 + 1, 0, false},
		{math.MaxUint64, 0, false},
	} {
		d, ok := Duration(tc.ns).Duration()
		require.Equal(t, tc.ok, ok, "%d", tc.ns)
		require.Equal(t, tc.want, d, "%d", tc.ns)
		require.Equal(t, tc.ns, Duration(tc.ns).Uint(), "Uint keeps every duration")
	}
	_, ok := Uint(5).Duration()
	require.False(t, ok, "a uint is not a duration")
	_, ok = Timestamp(5).Duration()
	require.False(t, ok)
}
