package clock

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func checkTickBoundary(t *testing.T, origin int64, period, id uint64) {
	t.Helper()
	got, err := TickBoundary(origin, period, id)
	switch {
	case period == 0:
		require.ErrorIs(t, err, ErrInvalidPeriod)
	case id == 0:
		require.ErrorIs(t, err, ErrInvalidTick)
	default:
		want := refTickBoundary(origin, period, id)
		if !fitsInt64(want) {
			requireOverflow(t, err, "tick boundary")
			return
		}
		require.NoError(t, err)
		require.Equal(t, want.Int64(), got, "origin %d period %d id %d", origin, period, id)
	}
}

// checkTicks compares LatestDueTick and NextTick with the reference: the
// latest due tick is the largest id whose boundary is ≤ now, and the next
// tick is the one after it.
func checkTicks(t *testing.T, origin int64, period uint64, now int64) {
	t.Helper()
	id, boundary, err := LatestDueTick(origin, period, now)
	nid, nboundary, nerr := NextTick(origin, period, now)
	if period == 0 {
		require.ErrorIs(t, err, ErrInvalidPeriod)
		require.ErrorIs(t, nerr, ErrInvalidPeriod)
		return
	}
	if now < origin {
		require.NoError(t, err)
		require.Zero(t, id)
		require.Zero(t, boundary)
		require.NoError(t, nerr)
		require.Equal(t, uint64(1), nid)
		require.Equal(t, origin, nboundary)
		return
	}
	wantID := refFrontier(origin, period, now)
	wantID.Add(wantID, big.NewInt(1))
	if !fitsUint64(wantID) {
		requireOverflow(t, err, "latest due tick")
	} else {
		require.NoError(t, err)
		require.Equal(t, wantID.Uint64(), id)
		require.Equal(t, refTickBoundary(origin, period, id).Int64(), boundary)
		require.LessOrEqual(t, boundary, now)
	}
	nextID := new(big.Int).Add(wantID, big.NewInt(1))
	nextBoundary := refTickBoundary(origin, period, 1)
	if fitsUint64(nextID) {
		nextBoundary = refTickBoundary(origin, period, nextID.Uint64())
	}
	if !fitsUint64(nextID) || !fitsInt64(nextBoundary) {
		requireOverflow(t, nerr, "next tick")
		return
	}
	require.NoError(t, nerr)
	require.Equal(t, nextID.Uint64(), nid)
	require.Equal(t, nextBoundary.Int64(), nboundary)
	require.Greater(t, nboundary, now)
}

func TestTickBoundaryProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range propertyRuns {
		checkTickBoundary(t, genInt64(r), genUint64(r), genUint64(r))
	}
}

func TestTicksProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range propertyRuns {
		origin, period, now := genInt64(r), genUint64(r), genInt64(r)
		if r.IntN(2) == 0 && period != 0 {
			// Land on, just before and just after a boundary.
			b, err := TickBoundary(origin, period, 1+r.Uint64N(300))
			if err == nil {
				now = b + r.Int64N(3) - 1
			}
		}
		checkTicks(t, origin, period, now)
	}
}

var tickBoundaryCases = []struct {
	name   string
	origin int64
	period uint64
	id     uint64
	want   int64
	err    error
}{
	{"tick 1 is the origin", 1000, 10, 1, 1000, nil},
	{"tick 2", 1000, 10, 2, 1010, nil},
	{"id 0 is invalid", 1000, 10, 0, 0, ErrInvalidTick},
	{"period 0 is invalid", 1000, 0, 1, 0, ErrInvalidPeriod},
	{"period beyond int64 from min", math.MinInt64, math.MaxUint64, 2, math.MaxInt64, nil},
	{"period beyond int64 one past", math.MinInt64 + 1, math.MaxUint64, 2, 0, ErrOverflow},
	{"last representable boundary", math.MaxInt64 - 10, 10, 2, math.MaxInt64, nil},
	{"just outside", math.MaxInt64 - 9, 10, 2, 0, ErrOverflow},
	{"product overflows 64 bits", 0, 1 << 40, 1 << 30, 0, ErrOverflow},
	{"max id period 1 from min", math.MinInt64, 1, math.MaxUint64, math.MaxInt64 - 1, nil},
}

func TestTickBoundaryTable(t *testing.T) {
	for _, tc := range tickBoundaryCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TickBoundary(tc.origin, tc.period, tc.id)
			checkTickBoundary(t, tc.origin, tc.period, tc.id)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

var latestDueCases = []struct {
	name         string
	origin       int64
	period       uint64
	now          int64
	id, nextID   uint64
	boundary     int64
	nextBoundary int64
	err, nextErr error
}{
	{"before origin", 100, 10, 99, 0, 1, 0, 100, nil, nil},
	{"at origin", 100, 10, 100, 1, 2, 100, 110, nil, nil},
	{"just before tick 2", 100, 10, 109, 1, 2, 100, 110, nil, nil},
	{"at tick 2", 100, 10, 110, 2, 3, 110, 120, nil, nil},
	{"missed many ticks coalesce", 100, 10, 1_000_005, 99_991, 99_992, 1_000_000, 1_000_010, nil, nil},
	{"period 0", 100, 0, 100, 0, 0, 0, 0, ErrInvalidPeriod, ErrInvalidPeriod},
	{"next boundary leaves int64", math.MaxInt64 - 5, 10, math.MaxInt64, 1, 0, math.MaxInt64 - 5, 0, nil, ErrOverflow},
	{"tick id overflow", math.MinInt64, 1, math.MaxInt64, 0, 0, 0, 0, ErrOverflow, ErrOverflow},
	{"largest tick id", math.MinInt64, 1, math.MaxInt64 - 1, math.MaxUint64, 0, math.MaxInt64 - 1, 0, nil, ErrOverflow},
	{"period beyond int64", math.MinInt64, math.MaxUint64, math.MaxInt64, 2, 3, math.MaxInt64, 0, nil, ErrOverflow},
}

func TestLatestDueTickTable(t *testing.T) {
	for _, tc := range latestDueCases {
		t.Run(tc.name, func(t *testing.T) {
			checkTicks(t, tc.origin, tc.period, tc.now)
			id, boundary, err := LatestDueTick(tc.origin, tc.period, tc.now)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
			} else {
				require.NoError(t, err)
				require.Equal(t, tc.id, id)
				require.Equal(t, tc.boundary, boundary)
			}
			nid, nboundary, err := NextTick(tc.origin, tc.period, tc.now)
			if tc.nextErr != nil {
				require.ErrorIs(t, err, tc.nextErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.nextID, nid)
			require.Equal(t, tc.nextBoundary, nboundary)
		})
	}
}
