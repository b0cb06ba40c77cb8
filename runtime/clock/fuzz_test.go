package clock

import (
	"math"
	"testing"
)

// FuzzArithmetic compares projection, the inverse wait and wall-at with the
// exact math/big reference for arbitrary mappings and instants. The rate is
// fuzzed as raw float64 bits, so invalid rates are exercised too.
func FuzzArithmetic(f *testing.F) {
	seeds := []struct {
		wallStart, logicalStart int64
		rate                    float64
		wall, target            int64
	}{
		{100, 5000, 60, 101, 5061},
		{0, 0, 0.1, 10, 3},
		{0, math.MaxInt64 - 10, 0.5, 23, math.MaxInt64},
		{math.MinInt64, math.MinInt64, 1, math.MaxInt64, math.MaxInt64},
		{math.MinInt64, 0, 5e-324, math.MaxInt64, 1},
		{0, 7, math.MaxFloat64, 1, 8},
		{0, 0, math.Ldexp(1, -64), 1, 1},
		{0, 0, math.Nextafter(1, 2), math.MaxInt64, math.MaxInt64},
	}
	for _, s := range seeds {
		f.Add(s.wallStart, s.logicalStart, math.Float64bits(s.rate), s.wall, s.target)
	}
	f.Add(int64(0), int64(0), uint64(0), int64(1), int64(1))                     // zero rate
	f.Add(int64(0), int64(0), math.Float64bits(math.NaN()), int64(1), int64(1))  // NaN
	f.Add(int64(0), int64(0), math.Float64bits(math.Inf(1)), int64(1), int64(1)) // infinity
	f.Fuzz(func(t *testing.T, wallStart, logicalStart int64, rateBits uint64, wall, target int64) {
		m := Mapping{WallStartedAt: wallStart, LogicalStart: logicalStart, Rate: math.Float64frombits(rateBits)}
		if err := m.Validate(); err != nil {
			if _, ok := decompose(m.Rate); ok {
				t.Fatalf("rate %v rejected: %v", m.Rate, err)
			}
			return
		}
		checkProject(t, m, wall)
		checkWait(t, m.Rate, logicalStart, target)
		checkWait(t, m.Rate, wall, target)
		checkWallAt(t, m, target)
	})
}

// FuzzTicks compares tick boundaries, the latest due tick and the next tick
// with the math/big reference.
func FuzzTicks(f *testing.F) {
	f.Add(int64(100), uint64(10), uint64(2), int64(109))
	f.Add(int64(math.MinInt64), uint64(math.MaxUint64), uint64(2), int64(math.MaxInt64))
	f.Add(int64(math.MinInt64), uint64(1), uint64(math.MaxUint64), int64(math.MaxInt64))
	f.Add(int64(0), uint64(0), uint64(0), int64(0))
	f.Fuzz(func(t *testing.T, origin int64, period, id uint64, now int64) {
		checkTickBoundary(t, origin, period, id)
		checkTicks(t, origin, period, now)
	})
}

// FuzzAdmit compares single and batch admission with the reference scan of
// the 256 eligible centers.
func FuzzAdmit(f *testing.F) {
	f.Add(int64(0), uint64(10), uint64(2), int64(35), int64(8), int64(3), int64(-2))
	f.Add(int64(0), uint64(10), uint64(1), int64(2560), int64(9), int64(0), int64(2561))
	f.Add(int64(math.MinInt64), uint64(math.MaxUint64), uint64(3), int64(math.MaxInt64),
		int64(math.MinInt64+3), int64(0), int64(math.MaxInt64-4))
	f.Add(int64(math.MinInt64), uint64(1<<63), uint64(1<<62-1), int64(0), int64(-1<<62), int64(1<<62), int64(math.MaxInt64))
	f.Add(int64(0), uint64(0), uint64(0), int64(0), int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, origin int64, period, skew uint64, now, a, b, c int64) {
		checkWindow(t, origin, period, skew, now, []int64{a, b, c})
	})
}
