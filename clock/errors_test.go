package clock

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorMessages(t *testing.T) {
	_, projectErr := Mapping{LogicalStart: math.MaxInt64, Rate: 1}.Project(1)
	_, waitErr := Mapping{Rate: 5e-324}.WaitDelta(1)
	_, wallErr := Mapping{WallStartedAt: math.MaxInt64, Rate: 1}.WallAt(1)
	_, tickErr := TickBoundary(math.MaxInt64, 1, 2)
	_, _, dueErr := LatestDueTick(math.MinInt64, 1, math.MaxInt64)
	_, _, nextErr := NextTick(math.MaxInt64, 1, math.MaxInt64)
	_, idErr := TickBoundary(0, 1, 0)
	_, periodErr := NewWindow(0, 0, 0, 0)
	rateErr := Mapping{Rate: -2.5}.Validate()
	for _, tc := range []struct {
		err      error
		sentinel error
		op       string
		contains []string
	}{
		{projectErr, ErrOverflow, "project", []string{"logical start 9223372036854775807", "rate 1", RangeTimestamp, "lower time rate"}},
		{waitErr, ErrOverflow, "wait", []string{"logical delta 1ns", "rate 5e-324", RangeDuration, "higher time rate"}},
		{wallErr, ErrOverflow, "wall at", []string{"wall start 9223372036854775807", RangeTimestamp, "higher time rate"}},
		{tickErr, ErrOverflow, "tick boundary", []string{"origin 9223372036854775807", "tick 2", RangeTimestamp, "smaller tick id"}},
		{dueErr, ErrOverflow, "latest due tick", []string{"now 9223372036854775807", RangeTickID, "at least 2ns"}},
		{nextErr, ErrOverflow, "next tick", []string{"origin 9223372036854775807 + 1 × period 1ns", RangeTimestamp, "no later tick"}},
		{idErr, ErrInvalidTick, "", []string{`"0"`, "use 1"}},
		{periodErr, ErrInvalidPeriod, "", []string{"admission window", "0ns", "at least 1ns"}},
		{rateErr, ErrInvalidRate, "", []string{`"-2.5"`, "positive finite"}},
	} {
		require.Error(t, tc.err)
		msg := tc.err.Error()
		require.ErrorIs(t, tc.err, tc.sentinel, msg)
		for _, other := range []error{ErrOverflow, ErrInvalidRate, ErrInvalidPeriod, ErrInvalidTick} {
			if other != tc.sentinel {
				require.NotErrorIs(t, tc.err, other, msg)
			}
		}
		if tc.op != "" {
			var oe *OverflowError
			require.True(t, errors.As(tc.err, &oe), msg)
			require.Equal(t, tc.op, oe.Op)
			require.Contains(t, msg, "clock: "+tc.op+": ")
		}
		for _, s := range tc.contains {
			require.Contains(t, msg, s)
		}
		require.Equal(t, msg[:1], string(msg[0]|0x20), "messages start lower-case: %s", msg)
	}
}
