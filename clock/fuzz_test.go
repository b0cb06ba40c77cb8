package clock

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzArithmetic compares projection, the inverse wait and wall-at with the
// exact math/big reference for arbitrary mappings and instants, seeded from
// the unit tables. The rate is fuzzed as raw float64 bits, so invalid rates
// are exercised too.
func FuzzArithmetic(f *testing.F) {
	for _, tc := range projectCases {
		f.Add(tc.m.WallStartedAt, tc.m.LogicalStart, math.Float64bits(tc.m.Rate), tc.wall, tc.want)
	}
	for _, tc := range waitCases {
		f.Add(int64(0), tc.current, math.Float64bits(tc.rate), tc.current, tc.target)
	}
	for _, tc := range wallAtCases {
		f.Add(tc.m.WallStartedAt, tc.m.LogicalStart, math.Float64bits(tc.m.Rate), tc.want, tc.target)
	}
	f.Add(int64(0), int64(0), uint64(0), int64(1), int64(1))                     // zero rate
	f.Add(int64(0), int64(0), math.Float64bits(math.NaN()), int64(1), int64(1))  // NaN
	f.Add(int64(0), int64(0), math.Float64bits(math.Inf(1)), int64(1), int64(1)) // infinity
	f.Fuzz(func(t *testing.T, wallStart, logicalStart int64, rateBits uint64, wall, target int64) {
		m := Mapping{WallStartedAt: wallStart, LogicalStart: logicalStart, Rate: math.Float64frombits(rateBits)}
		valid := m.Rate > 0 && !math.IsInf(m.Rate, 1) // false for NaN too
		err := m.Validate()
		if !valid {
			require.ErrorIs(t, err, ErrInvalidRate)
			_, err = m.Project(wall)
			require.ErrorIs(t, err, ErrInvalidRate)
			_, err = m.Projector()
			require.ErrorIs(t, err, ErrInvalidRate)
			_, err = m.Wait(logicalStart, target)
			require.ErrorIs(t, err, ErrInvalidRate)
			return
		}
		require.NoError(t, err)
		checkProject(t, m, wall)
		checkWait(t, m.Rate, logicalStart, target)
		checkWait(t, m.Rate, wall, target)
		checkWallAt(t, m, target)
	})
}

// FuzzTicks compares tick boundaries, the latest due tick and the next tick
// with the math/big reference.
func FuzzTicks(f *testing.F) {
	for _, tc := range tickBoundaryCases {
		f.Add(tc.origin, tc.period, tc.id, tc.want)
	}
	for _, tc := range latestDueCases {
		f.Add(tc.origin, tc.period, tc.id, tc.now)
	}
	f.Fuzz(func(t *testing.T, origin int64, period, id uint64, now int64) {
		checkTickBoundary(t, origin, period, id)
		checkTicks(t, origin, period, now)
	})
}

// FuzzAdmit compares single and batch admission with the reference scan of
// the 256 eligible centers.
func FuzzAdmit(f *testing.F) {
	for _, tc := range windowCases {
		ts := append(append([]int64{}, tc.admit...), tc.reject...)
		for len(ts)%3 != 0 {
			ts = append(ts, tc.now)
		}
		for i := 0; i < len(ts); i += 3 {
			f.Add(tc.origin, tc.period, tc.skew, tc.now, ts[i], ts[i+1], ts[i+2])
		}
	}
	f.Add(int64(0), uint64(0), uint64(0), int64(0), int64(0), int64(0), int64(0)) // period 0
	f.Fuzz(func(t *testing.T, origin int64, period, skew uint64, now, a, b, c int64) {
		checkWindow(t, origin, period, skew, now, []int64{a, b, c})
	})
}
