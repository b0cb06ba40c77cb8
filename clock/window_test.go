package clock

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// genWindowInputs draws window inputs biased toward the interesting edges:
// periods near 2^64, skews around half a period and beyond a period, and
// instants around the 256-position history.
func genWindowInputs(r *rand.Rand) (origin int64, period, skew uint64, now int64) {
	origin = genInt64(r)
	switch r.IntN(4) {
	case 0:
		period = 1 + r.Uint64N(20)
	case 1:
		period = 1 + r.Uint64N(1_000_000_000)
	default:
		period = max(genUint64(r), 1)
	}
	switch r.IntN(8) {
	case 0:
		skew = 0
	case 1:
		skew = period/2 - 1 + r.Uint64N(3) // around full coverage
	case 2:
		skew = period + r.Uint64N(3)
	case 3:
		skew = math.MaxUint64 - r.Uint64N(3)
	case 4:
		skew = r.Uint64N(period)
	default:
		skew = r.Uint64N(period/4 + 1)
	}
	var k uint64
	switch r.IntN(5) {
	case 0:
		k = r.Uint64N(4)
	case 1:
		k = 250 + r.Uint64N(12)
	default:
		k = r.Uint64() >> uint(r.IntN(64))
	}
	hi, off := bits.Mul64(k, period)
	off += r.Uint64N(3) // on a center, or just after
	now = genInt64(r)
	if r.IntN(4) != 0 && hi == 0 {
		if v, ok := addOffset(origin, off); ok {
			now = v
		}
	}
	return origin, period, skew, now
}

// genTimestamps draws event times at and around the tolerance edges of
// eligible centers, of the centers just outside the history, and anywhere.
func genTimestamps(r *rand.Rand, origin int64, period, skew uint64, ref refWindow, n int) []int64 {
	ts := make([]int64, 0, n)
	for len(ts) < n {
		if r.IntN(6) == 0 {
			ts = append(ts, genInt64(r))
			continue
		}
		pos := new(big.Int).Add(ref.first, big.NewInt(r.Int64N(int64(len(ref.centers))+4)-2))
		if r.IntN(3) == 0 {
			pos = new(big.Int).Add(ref.frontier, big.NewInt(r.Int64N(3)-1))
		}
		c := new(big.Int).Mul(pos, bigU(period))
		c.Add(c, bigI(origin))
		var d *big.Int
		switch r.IntN(6) {
		case 0:
			d = new(big.Int).Neg(bigU(skew))
		case 1:
			d = bigU(skew)
		case 2:
			d = big.NewInt(0)
		case 3:
			d = bigU(r.Uint64N(period))
		case 4:
			d = bigU(period / 2)
		default:
			d = new(big.Int).Neg(bigU(r.Uint64N(period)))
		}
		c.Add(c, d)
		c.Add(c, big.NewInt(r.Int64N(3)-1))
		switch {
		case c.Cmp(bigMinInt64) < 0:
			ts = append(ts, math.MinInt64)
		case c.Cmp(bigMaxInt64) > 0:
			ts = append(ts, math.MaxInt64)
		default:
			ts = append(ts, c.Int64())
		}
	}
	return ts
}

// checkWindow compares a window's reconstruction, single admission and batch
// admission with the reference scan of the 256 centers.
func checkWindow(t *testing.T, origin int64, period, skew uint64, now int64, ts []int64) {
	t.Helper()
	w, err := NewWindow(origin, period, skew, now)
	if period == 0 {
		require.ErrorIs(t, err, ErrInvalidPeriod)
		require.False(t, w.Admit(origin))
		require.Zero(t, w.AdmitBatch(ts, make([]uint64, BitmapWords(len(ts)))))
		return
	}
	require.NoError(t, err)
	ref := newRefWindow(origin, period, skew, now)
	require.Equal(t, ref.frontier.Uint64(), w.Frontier())
	require.Equal(t, ref.first.Uint64(), w.FirstPosition())
	require.Equal(t, ref.centers[0].Int64(), w.FirstCenter())
	require.Equal(t, ref.centers[len(ref.centers)-1].Int64(), w.LastCenter())
	require.LessOrEqual(t, w.LastCenter(), max(origin, now), "never a future center")
	require.Equal(t, origin, w.Origin())
	require.Equal(t, period, w.Period())
	require.Equal(t, skew, w.Skew())

	want := make([]bool, len(ts))
	wantCount := 0
	for i, v := range ts {
		want[i] = ref.admit(v)
		if want[i] {
			wantCount++
		}
		require.Equal(t, want[i], w.Admit(v), "origin %d period %d skew %d now %d ts %d", origin, period, skew, now, v)
	}
	bitmap := make([]uint64, BitmapWords(len(ts))+1)
	for i := range bitmap {
		bitmap[i] = math.MaxUint64 // stale bits must be overwritten
	}
	got := w.AdmitBatch(ts, bitmap)
	require.Equal(t, wantCount, got)
	for i := range ts {
		require.Equal(t, want[i], bitmap[i/64]>>(i%64)&1 == 1, "row %d ts %d", i, ts[i])
	}
	if rem := len(ts) % 64; rem != 0 {
		require.Zero(t, bitmap[len(ts)/64]>>rem, "bits past the last row")
	}
	require.Equal(t, uint64(math.MaxUint64), bitmap[len(bitmap)-1], "words past the rows are untouched")
}

func TestWindowProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	kinds := map[string]int{}
	for range 1500 {
		origin, period, skew, now := genWindowInputs(r)
		ref := newRefWindow(origin, period, skew, now)
		ts := genTimestamps(r, origin, period, skew, ref, 1+r.IntN(150))
		checkWindow(t, origin, period, skew, now, ts)
		w, _ := NewWindow(origin, period, skew, now)
		switch {
		case w.covered:
			kinds["covered"]++
		case w.clamped:
			kinds["gaps, lower bound clamped"]++
		default:
			kinds["gaps"]++
		}
	}
	t.Logf("window kinds: %v", kinds)
	// Every batch path is exercised.
	for _, k := range []string{"covered", "gaps, lower bound clamped", "gaps"} {
		require.GreaterOrEqual(t, kinds[k], 20, "%s windows: %v", k, kinds)
	}
}

var windowCases = []struct {
	name                 string
	origin               int64
	period, skew         uint64
	now                  int64
	frontier, first      uint64
	admit, reject        []int64
	firstCenter, lastCtr int64
}{
	{
		name: "position zero eligible on start", origin: 0, period: second, skew: 100 * millisecond, now: 0,
		admit:  []int64{0, -int64(100 * millisecond), int64(100 * millisecond)},
		reject: []int64{-int64(100*millisecond) - 1, int64(100*millisecond) + 1, int64(second)},
	},
	{
		name: "now before origin clamps to position zero", origin: 1000, period: 10, skew: 2, now: 5,
		firstCenter: 1000, lastCtr: 1000,
		admit: []int64{998, 1000, 1002}, reject: []int64{997, 1003, 1010},
	},
	{
		name: "skew edges inclusive, gaps reject", origin: 0, period: 10, skew: 2, now: 35, frontier: 3,
		lastCtr: 30,
		admit:   []int64{-2, 8, 12, 28, 32}, reject: []int64{-3, 3, 7, 13, 27, 33, 40},
	},
	{
		name: "skew 0 admits only centers", origin: 5, period: 10, skew: 0, now: 100, frontier: 9,
		firstCenter: 5, lastCtr: 95,
		admit: []int64{5, 15, 95}, reject: []int64{4, 6, 96, 105},
	},
	{
		name: "overlapping windows admit their union", origin: 0, period: 10, skew: 5, now: 20, frontier: 2,
		lastCtr: 20,
		admit:   []int64{-5, 0, 5, 13, 25}, reject: []int64{-6, 26},
	},
	{
		name: "touching windows leave no gap", origin: 0, period: 11, skew: 5, now: 22, frontier: 2,
		lastCtr: 22,
		admit:   []int64{-5, 5, 6, 16, 17, 27}, reject: []int64{-6, 28},
	},
	{
		name: "one-ns gap between windows", origin: 0, period: 12, skew: 5, now: 24, frontier: 2,
		lastCtr: 24,
		admit:   []int64{5, 7, 17, 19, 29}, reject: []int64{6, 18, 30},
	},
	{
		name: "skew beyond period", origin: 0, period: 10, skew: 25, now: 10, frontier: 1,
		lastCtr: 10,
		admit:   []int64{-25, 35}, reject: []int64{-26, 36},
	},
	{
		name: "history keeps 256 positions", origin: 0, period: 10, skew: 1, now: 2555, frontier: 255,
		lastCtr: 2550,
		admit:   []int64{-1, 0, 2551}, reject: []int64{-2, 2552, 2560},
	},
	{
		name: "oldest position leaves the history", origin: 0, period: 10, skew: 1, now: 2560, frontier: 256, first: 1,
		firstCenter: 10, lastCtr: 2560,
		admit: []int64{9, 11, 2561}, reject: []int64{0, 1, 8, 2562},
	},
	{
		name: "period beyond int64", origin: math.MinInt64, period: math.MaxUint64, skew: 3, now: math.MaxInt64,
		frontier: 1, firstCenter: math.MinInt64, lastCtr: math.MaxInt64,
		admit:  []int64{math.MinInt64, math.MinInt64 + 3, math.MaxInt64 - 3, math.MaxInt64},
		reject: []int64{math.MinInt64 + 4, 0, math.MaxInt64 - 4},
	},
	{
		name: "tolerance clamps at both ends", origin: math.MinInt64, period: 1 << 63, skew: 1<<62 - 1, now: 0,
		frontier: 1, firstCenter: math.MinInt64, lastCtr: 0,
		admit:  []int64{math.MinInt64, -1<<62 - 1, -1<<62 + 1, 1<<62 - 1},
		reject: []int64{-1 << 62, 1 << 62, math.MaxInt64},
	},
	{
		name: "skew spans the whole range", origin: 0, period: 7, skew: math.MaxUint64, now: 100, frontier: 14,
		lastCtr: 98,
		admit:   []int64{math.MinInt64, math.MaxInt64},
	},
}

func TestWindowTable(t *testing.T) {
	for _, tc := range windowCases {
		t.Run(tc.name, func(t *testing.T) {
			checkWindow(t, tc.origin, tc.period, tc.skew, tc.now, append(append([]int64{}, tc.admit...), tc.reject...))
			w, err := NewWindow(tc.origin, tc.period, tc.skew, tc.now)
			require.NoError(t, err)
			require.Equal(t, tc.frontier, w.Frontier())
			require.Equal(t, tc.first, w.FirstPosition())
			require.Equal(t, tc.firstCenter, w.FirstCenter())
			require.Equal(t, tc.lastCtr, w.LastCenter())
			for _, v := range tc.admit {
				require.True(t, w.Admit(v), "admit %d", v)
			}
			for _, v := range tc.reject {
				require.False(t, w.Admit(v), "reject %d", v)
			}
		})
	}
}

func TestWindowInvalid(t *testing.T) {
	_, err := NewWindow(0, 0, 0, 0)
	require.ErrorIs(t, err, ErrInvalidPeriod)
	var zero Window
	require.False(t, zero.Admit(0))
	bitmap := []uint64{math.MaxUint64}
	require.Zero(t, zero.AdmitBatch([]int64{0, 1}, bitmap))
	require.Zero(t, bitmap[0])
}

func TestAdmitBatchShortBitmap(t *testing.T) {
	w, err := NewWindow(0, 10, 1, 1000)
	require.NoError(t, err)
	ts := make([]int64, 130)
	for i := range ts {
		ts[i] = 10 * int64(i)
	}
	require.Equal(t, 64, w.AdmitBatch(ts, make([]uint64, 1)))
	require.Zero(t, w.AdmitBatch(ts, nil))
	bitmap := make([]uint64, 3)
	require.Equal(t, 101, w.AdmitBatch(ts, bitmap)) // centers 0..1000
	require.Equal(t, uint64(math.MaxUint64), bitmap[0])
}

// TestAdmitBatchWholeWords runs every batch path on row counts that fill
// their bitmap words exactly: the word after the last row's word belongs to
// the caller and is left as it was, and a bitmap of exactly BitmapWords
// words is enough.
func TestAdmitBatchWholeWords(t *testing.T) {
	for _, tc := range []struct {
		name             string
		origin           int64
		period, skew     uint64
		now              int64
		covered, clamped bool
		from             int64  // the first row
		step             uint64 // the distance between rows
	}{
		{name: "covered", origin: 0, period: 10, skew: 5, now: 1000, covered: true, from: -100, step: 20},
		{name: "gaps", origin: 0, period: 10, skew: 1, now: 1000, from: -100, step: 7},
		{name: "gaps, lower bound clamped", origin: math.MinInt64, period: 1 << 63, skew: 1<<62 - 1, now: 0, clamped: true,
			from: math.MinInt64, step: 1 << 57},
	} {
		w, err := NewWindow(tc.origin, tc.period, tc.skew, tc.now)
		require.NoError(t, err)
		require.Equal(t, tc.covered, w.covered, tc.name)
		require.Equal(t, tc.clamped, w.clamped, tc.name)
		for _, n := range []int{64, 128} {
			t.Run(fmt.Sprintf("%s/%d rows", tc.name, n), func(t *testing.T) {
				ts := make([]int64, n)
				want := 0
				for i := range ts {
					ts[i] = int64(uint64(tc.from) + uint64(i)*tc.step)
					if w.Admit(ts[i]) {
						want++
					}
				}
				require.NotZero(t, want, "some rows are admitted")
				require.Less(t, want, n, "some rows are rejected")
				checkWindow(t, tc.origin, tc.period, tc.skew, tc.now, ts)
				require.Equal(t, want, w.AdmitBatch(ts, make([]uint64, BitmapWords(n))))
			})
		}
	}
}

// TestNaiveScanMatches keeps the benchmark's naive baseline honest.
func TestNaiveScanMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for range 300 {
		origin, period, skew, now := genWindowInputs(r)
		w, err := NewWindow(origin, period, skew, now)
		require.NoError(t, err)
		s := newNaiveScan(w)
		ref := newRefWindow(origin, period, skew, now)
		for _, v := range genTimestamps(r, origin, period, skew, ref, 20) {
			require.Equal(t, w.Admit(v), s.admit(v), "ts %d", v)
		}
	}
}
