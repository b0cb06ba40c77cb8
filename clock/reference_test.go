package clock

import (
	"math"
	"math/big"
	"math/rand/v2"
)

// The reference model: every quantity as an exact math/big value, computed
// the way the specification writes it, with no shortcuts shared with the
// implementation.

// Untyped time units for the test tables.
const (
	second      = 1_000_000_000
	millisecond = 1_000_000
)

var (
	bigMinInt64  = big.NewInt(math.MinInt64)
	bigMaxInt64  = big.NewInt(math.MaxInt64)
	bigMaxUint64 = new(big.Int).SetUint64(math.MaxUint64)
)

func bigI(v int64) *big.Int     { return big.NewInt(v) }
func bigU(v uint64) *big.Int    { return new(big.Int).SetUint64(v) }
func fitsInt64(v *big.Int) bool { return v.Cmp(bigMinInt64) >= 0 && v.Cmp(bigMaxInt64) <= 0 }
func fitsUint64(v *big.Int) bool {
	return v.Sign() >= 0 && v.Cmp(bigMaxUint64) <= 0
}

// floorRat returns floor(r) for r ≥ 0.
func floorRat(r *big.Rat) *big.Int {
	return new(big.Int).Quo(r.Num(), r.Denom())
}

// ceilRat returns ceil(r) for r ≥ 0.
func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func ratOf(rate float64) *big.Rat {
	r := new(big.Rat).SetFloat64(rate)
	// Cross-check the exact conversion through big.Float.
	if f, _ := new(big.Float).SetFloat64(rate).Rat(nil); r == nil || f.Cmp(r) != 0 {
		panic("inexact rate conversion")
	}
	return r
}

// refProject is logical_start + floor(max(0, wall − wall_started_at) × rate).
func refProject(m Mapping, wall int64) *big.Int {
	elapsed := new(big.Int).Sub(bigI(wall), bigI(m.WallStartedAt))
	if elapsed.Sign() < 0 {
		elapsed.SetInt64(0)
	}
	prod := new(big.Rat).Mul(new(big.Rat).SetInt(elapsed), ratOf(m.Rate))
	return floorRat(prod).Add(floorRat(prod), bigI(m.LogicalStart))
}

// refWait is ceil(max(0, target − current) / rate).
func refWait(rate float64, delta *big.Int) *big.Int {
	if delta.Sign() <= 0 {
		return new(big.Int)
	}
	return ceilRat(new(big.Rat).Quo(new(big.Rat).SetInt(delta), ratOf(rate)))
}

// refWallAt is the least wall ≥ wall_started_at with refProject(wall) ≥ target.
func refWallAt(m Mapping, target int64) *big.Int {
	delta := new(big.Int).Sub(bigI(target), bigI(m.LogicalStart))
	w := refWait(m.Rate, delta)
	return w.Add(w, bigI(m.WallStartedAt))
}

func refTickBoundary(origin int64, period, id uint64) *big.Int {
	b := new(big.Int).Mul(new(big.Int).Sub(bigU(id), big.NewInt(1)), bigU(period))
	return b.Add(b, bigI(origin))
}

// refFrontier is floor((now − origin) / period) clamped at 0.
func refFrontier(origin int64, period uint64, now int64) *big.Int {
	d := new(big.Int).Sub(bigI(now), bigI(origin))
	if d.Sign() < 0 {
		return new(big.Int)
	}
	return d.Quo(d, bigU(period))
}

// refWindow lists the eligible centers by scanning the newest 256 positions,
// each with its inclusive tolerance interval.
type refWindow struct {
	frontier *big.Int
	first    *big.Int
	centers  []*big.Int
	los, his []*big.Int
}

func newRefWindow(origin int64, period, skew uint64, now int64) refWindow {
	f := refFrontier(origin, period, now)
	first := new(big.Int).Sub(f, big.NewInt(255))
	if first.Sign() < 0 {
		first.SetInt64(0)
	}
	w := refWindow{frontier: f, first: first}
	for n := new(big.Int).Set(first); n.Cmp(f) <= 0; n = new(big.Int).Add(n, big.NewInt(1)) {
		c := new(big.Int).Mul(n, bigU(period))
		c.Add(c, bigI(origin))
		w.centers = append(w.centers, c)
		w.los = append(w.los, new(big.Int).Sub(c, bigU(skew)))
		w.his = append(w.his, new(big.Int).Add(c, bigU(skew)))
	}
	return w
}

func (w refWindow) admit(ts int64) bool {
	t := bigI(ts)
	for i := range w.centers {
		if t.Cmp(w.los[i]) >= 0 && t.Cmp(w.his[i]) <= 0 {
			return true
		}
	}
	return false
}

// Generators biased toward the edges of every range.

func genInt64(r *rand.Rand) int64 {
	switch r.IntN(8) {
	case 0:
		return math.MinInt64 + r.Int64N(1<<20)
	case 1:
		return math.MaxInt64 - r.Int64N(1<<20)
	case 2:
		return r.Int64N(1<<21) - 1<<20
	case 3:
		return int64(r.Uint64() >> uint(r.IntN(64)))
	case 4:
		return -int64(r.Uint64() >> uint(1+r.IntN(63)))
	default:
		return int64(r.Uint64())
	}
}

func genUint64(r *rand.Rand) uint64 {
	switch r.IntN(7) {
	case 0:
		return math.MaxUint64 - r.Uint64N(1<<20)
	case 1:
		return 1<<63 + r.Uint64N(1<<20) - 1<<19
	case 2:
		return r.Uint64N(1 << 20)
	case 3:
		return r.Uint64() >> uint(r.IntN(64))
	default:
		return r.Uint64()
	}
}

func genRate(r *rand.Rand) float64 {
	switch r.IntN(10) {
	case 0:
		return []float64{5e-324, math.SmallestNonzeroFloat64 * 3, math.MaxFloat64, 1, 0.5, 2, 60, 1e-9, 1e9, 0.1,
			math.Float64frombits(0x000fffffffffffff), math.Float64frombits(0x0010000000000000)}[r.IntN(12)]
	case 1:
		return math.Ldexp(1, r.IntN(2098)-1074) // exact powers of two
	case 2:
		return math.Float64frombits(math.Float64bits(1) + r.Uint64N(1<<10) - 1<<9) // near 1
	case 3:
		return math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
	case 4:
		return math.Ldexp(r.Float64()+0.5, r.IntN(140)-70) // rates that keep results in range
	default:
		for {
			v := math.Float64frombits(r.Uint64() >> 1)
			if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				return v
			}
		}
	}
}

func genMapping(r *rand.Rand) Mapping {
	return Mapping{WallStartedAt: genInt64(r), LogicalStart: genInt64(r), Rate: genRate(r)}
}
