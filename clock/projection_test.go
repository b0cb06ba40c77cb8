package clock

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

const propertyRuns = 20000

func requireOverflow(t *testing.T, err error, op string) {
	t.Helper()
	require.ErrorIs(t, err, ErrOverflow)
	var oe *OverflowError
	require.True(t, errors.As(err, &oe), "error %v is not an *OverflowError", err)
	require.Equal(t, op, oe.Op)
	require.Contains(t, err.Error(), op)
}

// checkProject compares Project with the big reference.
// checkProject compares Project, and a prepared Projector's Project, with
// the big reference.
func checkProject(t *testing.T, m Mapping, wall int64) {
	t.Helper()
	pr, err := m.Projector()
	require.NoError(t, err, "mapping %+v", m)
	require.Equal(t, m, pr.Mapping())
	want := refProject(m, wall)
	for name, project := range map[string]func(int64) (int64, error){"mapping": m.Project, "projector": pr.Project} {
		got, err := project(wall)
		if fitsInt64(want) {
			require.NoError(t, err, "%s %+v wall %d", name, m, wall)
			require.Equal(t, want.Int64(), got, "%s %+v wall %d", name, m, wall)
			continue
		}
		requireOverflow(t, err, "project")
	}
}

// checkWait compares Wait with the big reference.
func checkWait(t *testing.T, rate float64, current, target int64) {
	t.Helper()
	m := Mapping{Rate: rate}
	got, err := m.Wait(current, target)
	want := refWait(rate, new(big.Int).Sub(bigI(target), bigI(current)))
	if fitsUint64(want) {
		require.NoError(t, err, "rate %v current %d target %d", rate, current, target)
		require.Equal(t, want.Uint64(), got, "rate %v current %d target %d", rate, current, target)
		if target > current {
			require.GreaterOrEqual(t, got, uint64(1))
		}
		return
	}
	requireOverflow(t, err, "wait")
}

// checkWallAt compares WallAt with the big reference and checks it against
// Project from both sides.
func checkWallAt(t *testing.T, m Mapping, target int64) {
	t.Helper()
	got, err := m.WallAt(target)
	want := refWallAt(m, target)
	if !fitsInt64(want) {
		require.ErrorIs(t, err, ErrOverflow)
		return
	}
	require.NoError(t, err, "mapping %+v target %d", m, target)
	require.Equal(t, want.Int64(), got, "mapping %+v target %d", m, target)
	if p, err := m.Project(got); err == nil {
		require.GreaterOrEqual(t, p, target, "mapping %+v target %d wall %d", m, target, got)
	} else {
		requireOverflow(t, err, "project") // beyond int64, so certainly ≥ target
	}
	if got > m.WallStartedAt {
		p, err := m.Project(got - 1)
		require.NoError(t, err)
		require.Less(t, p, target, "mapping %+v target %d wall %d", m, target, got)
	}
}

func TestProjectProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range propertyRuns {
		m := genMapping(r)
		wall := genInt64(r)
		if r.IntN(3) == 0 {
			// Elapsed times that keep the product near the int64 edge.
			wall = int64(uint64(m.WallStartedAt) + r.Uint64()>>uint(r.IntN(64)))
		}
		checkProject(t, m, wall)
	}
}

func TestWaitProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range propertyRuns {
		rate := genRate(r)
		current, target := genInt64(r), genInt64(r)
		if r.IntN(2) == 0 {
			target = int64(uint64(current) + r.Uint64()>>uint(r.IntN(64)))
		}
		checkWait(t, rate, current, target)
	}
}

func TestWallAtProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range propertyRuns {
		m := genMapping(r)
		target := genInt64(r)
		if r.IntN(2) == 0 {
			target = int64(uint64(m.LogicalStart) + r.Uint64()>>uint(r.IntN(64)))
		}
		checkWallAt(t, m, target)
	}
}

// TestProjectWaitInverse checks that waiting the returned duration reaches the
// target and one nanosecond less does not.
func TestProjectWaitInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range propertyRuns / 4 {
		m := genMapping(r)
		m.WallStartedAt = 0
		m.LogicalStart = genInt64(r)
		delta := r.Uint64() >> uint(r.IntN(64))
		wait, err := m.WaitDelta(delta)
		if err != nil {
			requireOverflow(t, err, "wait")
			continue
		}
		p := Mapping{Rate: m.Rate}.parts(t)
		reached, ok := p.mulFloor(wait)
		require.True(t, !ok || reached >= delta, "rate %v delta %d wait %d", m.Rate, delta, wait)
		if wait > 0 {
			before, ok := p.mulFloor(wait - 1)
			require.True(t, ok)
			require.Less(t, before, delta, "rate %v delta %d wait %d", m.Rate, delta, wait)
		}
	}
}

func (m Mapping) parts(t *testing.T) rateParts {
	t.Helper()
	p, ok := decompose(m.Rate)
	require.True(t, ok)
	return p
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		ok   bool
	}{
		{5e-324, true},
		{math.MaxFloat64, true},
		{1, true},
		{math.Float64frombits(0x000fffffffffffff), true},
		{0, false},
		{math.Copysign(0, -1), false},
		{-1, false},
		{-5e-324, false},
		{math.Inf(1), false},
		{math.Inf(-1), false},
		{math.NaN(), false},
	} {
		m := Mapping{Rate: tc.rate}
		err := m.Validate()
		if tc.ok {
			require.NoError(t, err, "rate %v", tc.rate)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidRate, "rate %v", tc.rate)
		require.Contains(t, err.Error(), formatRate(tc.rate))
		_, err = m.Project(10)
		require.ErrorIs(t, err, ErrInvalidRate)
		_, err = m.Wait(0, 10)
		require.ErrorIs(t, err, ErrInvalidRate)
		_, err = m.Wait(10, 0)
		require.ErrorIs(t, err, ErrInvalidRate)
		_, err = m.WaitDelta(5)
		require.ErrorIs(t, err, ErrInvalidRate)
		_, err = m.WallAt(5)
		require.ErrorIs(t, err, ErrInvalidRate)
	}
}

var projectCases = []struct {
	name string
	m    Mapping
	wall int64
	want int64
	err  bool
}{
	{"before anchor contributes nothing", Mapping{100, 5000, 60}, 99, 5000, false},
	{"at anchor", Mapping{100, 5000, 60}, 100, 5000, false},
	{"just after anchor", Mapping{100, 5000, 60}, 101, 5060, false},
	{"rate 1", Mapping{0, 0, 1}, 42, 42, false},
	{"rounds down below one ns", Mapping{0, 0, 0.5}, 1, 0, false},
	{"rounds down at one ns", Mapping{0, 0, 0.5}, 2, 1, false},
	{"0.1 is slightly above a tenth", Mapping{0, 0, 0.1}, 10, 1, false},
	{"0.3 is slightly below three tenths", Mapping{0, 0, 0.3}, 10, 2, false},
	{"one minute per second", Mapping{0, 0, 60}, second, 60 * second, false},
	{"smallest rate", Mapping{math.MinInt64, 0, 5e-324}, math.MaxInt64, 0, false},
	{"largest rate zero elapsed", Mapping{0, 7, math.MaxFloat64}, 0, 7, false},
	{"largest rate one ns", Mapping{0, 7, math.MaxFloat64}, 1, 0, true},
	{"full unsigned elapsed at rate 1", Mapping{math.MinInt64, math.MinInt64, 1}, math.MaxInt64, math.MaxInt64, false},
	{"max int64 exactly", Mapping{0, math.MaxInt64 - 10, 1}, 10, math.MaxInt64, false},
	{"one past max int64", Mapping{0, math.MaxInt64 - 10, 1}, 11, 0, true},
	{"one past max int64 fractional", Mapping{0, math.MaxInt64 - 10, 0.5}, 23, 0, true},
	{"just inside fractional", Mapping{0, math.MaxInt64 - 10, 0.5}, 21, math.MaxInt64, false},
	{"elapsed 2^64-1 at rate 2", Mapping{math.MinInt64, math.MinInt64, 2}, math.MaxInt64, 0, true},
}

func TestProjectTable(t *testing.T) {
	for _, tc := range projectCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.m.Project(tc.wall)
			checkProject(t, tc.m, tc.wall)
			if tc.err {
				requireOverflow(t, err, "project")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

var waitCases = []struct {
	name            string
	rate            float64
	current, target int64
	want            uint64
	err             bool
}{
	{"already due", 2, 10, 10, 0, false},
	{"past target", 2, 10, 5, 0, false},
	{"positive is at least one", math.MaxFloat64, 0, 1, 1, false},
	{"rounds up", 2, 0, 3, 2, false},
	{"exact", 2, 0, 4, 2, false},
	{"rate 1", 1, -5, 5, 10, false},
	{"slow clock", 0.5, 0, 3, 6, false},
	{"full delta rate 1", 1, math.MinInt64, math.MaxInt64, math.MaxUint64, false},
	{"full delta rate 0.5 overflows", 0.5, math.MinInt64, math.MaxInt64, 0, true},
	{"largest exact at rate 0.5", 0.5, 0, math.MaxInt64, math.MaxUint64 - 1, false},
	{"smallest rate one ns", 5e-324, 0, 1, 0, true},
	{"rate 2^-64 one ns", math.Ldexp(1, -64), 0, 1, 0, true},
	{"rate just above 2^-64 one ns", math.Nextafter(math.Ldexp(1, -64), 1), 0, 1, math.MaxUint64 - 1<<12 + 2, false},
}

func TestWaitTable(t *testing.T) {
	for _, tc := range waitCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Mapping{Rate: tc.rate}.Wait(tc.current, tc.target)
			checkWait(t, tc.rate, tc.current, tc.target)
			if tc.err {
				requireOverflow(t, err, "wait")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

var wallAtCases = []struct {
	name   string
	m      Mapping
	target int64
	want   int64
	err    bool
}{
	{"at logical start", Mapping{100, 50, 2}, 50, 100, false},
	{"before logical start", Mapping{100, 50, 2}, 10, 100, false},
	{"one ns after start at rate 2", Mapping{100, 50, 2}, 51, 101, false},
	{"two ns after start at rate 2", Mapping{100, 50, 2}, 52, 101, false},
	{"three ns after start at rate 0.5", Mapping{100, 50, 0.5}, 53, 106, false},
	{"wall leaves int64", Mapping{math.MaxInt64 - 1, 0, 0.5}, 1, 0, true},
}

func TestWallAtTable(t *testing.T) {
	for _, tc := range wallAtCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.m.WallAt(tc.target)
			checkWallAt(t, tc.m, tc.target)
			if tc.err {
				requireOverflow(t, err, "wall at")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestProjectorWholeRates checks the whole-rate multiply of a Projector at
// the edge of its 64-bit product, where it must overflow exactly when the
// 128-bit product of Mapping.Project does.
func TestProjectorWholeRates(t *testing.T) {
	for _, rate := range []float64{1, 2, 3, 60, 1 << 40, 1 << 62, 1 << 63, 1 << 64, 1 << 65, 3 << 61} {
		m := Mapping{WallStartedAt: math.MinInt64, LogicalStart: math.MinInt64, Rate: rate}
		pr, err := m.Projector()
		require.NoError(t, err)
		var edges []uint64
		if pr.whole {
			edges = append(edges, pr.limit-1, pr.limit, pr.limit+1)
		}
		edges = append(edges, 0, 1, 2, math.MaxInt64, math.MaxUint64)
		for _, elapsed := range edges {
			checkProject(t, m, int64(uint64(m.WallStartedAt)+elapsed))
		}
	}
}
