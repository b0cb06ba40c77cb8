package wire

import (
	"fmt"
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

// TestValueString: every kind prints as the shell prints it in a result
// set, and fmt prints a Value through String.
func TestValueString(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Null(), "NULL"},
		{Value{}, "NULL"},
		{Text(""), ""},
		{Text("prod eu"), "prod eu"},
		{Uint(0), "0"},
		{Uint(math.MaxUint64), "18446744073709551615"},
		{Duration(0), "0s"},
		{Duration(1500 * uint64(time.Millisecond)), "1.5s"},
		{Duration(uint64(90 * time.Minute)), "1h30m"},
		{Duration(40 * uint64(time.Microsecond)), "40us"},
		{Duration(1), "1ns"},
		{Duration(math.MaxUint64), "5124095h34m33.709551615s"},
		{Timestamp(1767225600 * int64(time.Second)), "2026-01-01T00:00:00Z"},
		{Timestamp(1767225600*int64(time.Second) + 1), "2026-01-01T00:00:00.000000001Z"},
		{Timestamp(1767225600*int64(time.Second) + 500*int64(time.Millisecond)), "2026-01-01T00:00:00.5Z"},
		{Timestamp(math.MinInt64), "1677-09-21T00:12:43.145224192Z"},
		{Rate(1), "1"},
		{Rate(0.5), "0.5"},
		{Rate(60), "60"},
		{Rate(5e-324), "5e-324"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.v.String())
			require.Equal(t, tc.want, fmt.Sprint(tc.v))
		})
	}
}
