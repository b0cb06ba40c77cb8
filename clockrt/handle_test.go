package clockrt

import (
	"math"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

// TestReadAfterReplacement binds a handle to generation 2 and replaces the
// installation with every state: the read either succeeds or fails with the
// typed error the spec names, and never falls back to wall time.
func TestReadAfterReplacement(t *testing.T) {
	moved := paced(2, 60, 0)
	moved.Authority = fenceB
	tests := []struct {
		name string
		to   *Lifecycle // nil: remove the domain
		err  error
	}{
		{"unchanged", lcp(paced(2, 60, 0)), nil},
		{"authority moved", &moved, nil},
		{"removed", nil, ErrDomainMissing},
		{"stopped same generation", lcp(stopped(2, 0)), ErrDomainStopped},
		{"stopped after later generation", lcp(stopped(3, 0)), ErrDomainStopped},
		{"uninstalled same generation", lcp(uninstalled(2, 0)), ErrClockUninstalled},
		{"uninstalled later generation", lcp(uninstalled(3, 0)), ErrStaleGeneration},
		{"later paced generation", lcp(paced(3, 60, 0)), ErrStaleGeneration},
		{"later unpaced generation", lcp(unpaced(3, 0)), ErrStaleGeneration},
		{"earlier generation", lcp(paced(1, 60, 0)), ErrStaleGeneration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, f := newFakeRegistry(t)
			install(t, r, "prod", paced(2, 60, 0))
			h, err := r.Bind("prod")
			require.NoError(t, err)
			f.Advance(1000)
			if tt.to == nil {
				r.Remove("prod")
			} else {
				install(t, r, "prod", *tt.to)
			}
			got, err := h.Now()
			snap, serr := h.Snapshot()
			if tt.err == nil {
				require.NoError(t, err)
				require.NoError(t, serr)
				require.Equal(t, base-10*second+60*1000, got)
				require.Equal(t, Snapshot{Generation: 2, Time: got}, snap)
				return
			}
			ce := requireClockErr(t, err, tt.err, "prod")
			require.Equal(t, "read", ce.Op)
			require.Equal(t, uint64(2), ce.Generation)
			require.ErrorIs(t, err, ErrClockUnavailable)
			require.Zero(t, got, "no failure substitutes wall time")
			requireClockErr(t, serr, tt.err, "prod")
			require.Zero(t, snap)
		})
	}
}

func lcp(lc Lifecycle) *Lifecycle { return &lc }

// TestPacedProjection reads a paced clock at instants around the anchor,
// including fractional rates where floor matters.
func TestPacedProjection(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		advance int64 // physical ns after the anchor
		want    int64 // logical ns after the logical start
	}{
		{"at anchor", 60, 0, 0},
		{"rate 60 one ns", 60, 1, 60},
		{"rate 1", 1, 12345, 12345},
		{"third rate just below", 1.0 / 3, 2, 0},
		{"third rate at boundary", 1.0 / 3, 3, 0}, // 1/3 as float64 is below one third
		{"third rate past boundary", 1.0 / 3, 4, 1},
		{"half rate odd", 0.5, 7, 3},
		{"rate 0.1 ten ns", 0.1, 10, 1}, // 0.1 as float64 is above one tenth
		{"rate 0.1 nine ns", 0.1, 9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, f := newFakeRegistry(t)
			install(t, r, "d", paced(1, tt.rate, 0))
			h, err := r.Bind("d")
			require.NoError(t, err)
			f.Advance(timeDuration(tt.advance))
			got, err := h.Now()
			require.NoError(t, err)
			require.Equal(t, base-10*second+tt.want, got)
		})
	}
}

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// TestPacedBeforeAnchor: a UTC observation before the anchor contributes
// no elapsed time.
func TestPacedBeforeAnchor(t *testing.T) {
	f := timesource.NewFake(base - second)
	r := NewRegistry(f)
	install(t, r, "d", paced(1, 60, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	got, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, base-10*second, got)
}

func TestUnpacedReadsUTC(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "u", unpaced(1, 0))
	h, err := r.Bind("u")
	require.NoError(t, err)
	got, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, base, got)
	f.Advance(7)
	got, err = h.Now()
	require.NoError(t, err)
	require.Equal(t, base+7, got)
}

// TestWatermarkHoldsAcrossUTCStepBack: a host clock stepped backwards does
// not make reads of the same generation move backwards, for paced and
// unpaced clocks alike: neither the read that finds the step nor the reads
// after it while UTC is still behind the mark; reads resume advancing once
// UTC passes the mark.
func TestWatermarkHoldsAcrossUTCStepBack(t *testing.T) {
	for _, lc := range []Lifecycle{paced(1, 2, 0), unpaced(1, 0)} {
		t.Run(lc.State.String(), func(t *testing.T) {
			r, f := newFakeRegistry(t)
			install(t, r, "d", lc)
			h, err := r.Bind("d")
			require.NoError(t, err)
			f.Advance(100)
			high, err := h.Now()
			require.NoError(t, err)
			f.Set(base)
			got, err := h.Now()
			require.NoError(t, err)
			require.Equal(t, high, got, "read went backwards after a UTC step")
			w, ok := r.Current("d").Watermark()
			require.True(t, ok)
			require.Equal(t, high, w)
			for _, d := range []time.Duration{0, 50} {
				f.Advance(d)
				got, err = h.Now()
				require.NoError(t, err)
				require.Equal(t, high, got, "read went backwards %s after the UTC step", d)
			}
			f.Set(base + 101)
			got, err = h.Now()
			require.NoError(t, err)
			require.Greater(t, got, high)
		})
	}
}

// TestWatermarkScope: the watermark covers one uninterrupted installation
// of a generation.
func TestWatermarkScope(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 0))
	h1, err := r.Bind("d")
	require.NoError(t, err)
	f.Advance(1000)
	high, err := h1.Now()
	require.NoError(t, err)
	f.Set(base)

	// An authority move keeps the generation: the mark carries over.
	moved := paced(1, 1, 0)
	moved.Authority = fenceB
	install(t, r, "d", moved)
	got, err := h1.Now()
	require.NoError(t, err)
	require.Equal(t, high, got)

	// Uninstalled and installed again: a new mark, so the read follows UTC.
	install(t, r, "d", uninstalled(1, 0))
	install(t, r, "d", moved)
	got, err = h1.Now()
	require.NoError(t, err)
	require.Equal(t, base-10*second, got)

	// A later generation is never clamped by the earlier one's mark.
	f.Set(base + 1000)
	_, err = h1.Now()
	require.NoError(t, err)
	later := paced(2, 1, 0)
	later.Mapping.LogicalStart = base - 100*second
	install(t, r, "d", later)
	h2, err := r.Bind("d")
	require.NoError(t, err)
	got, err = h2.Now()
	require.NoError(t, err)
	require.Equal(t, base-100*second+1000, got)
	_, err = h1.Now()
	requireClockErr(t, err, ErrStaleGeneration, "d")
}

func TestReadOverflow(t *testing.T) {
	r, f := newFakeRegistry(t)
	lc := paced(1, 1, 0)
	lc.Mapping.LogicalStart = math.MaxInt64 - 10
	install(t, r, "d", lc)
	h, err := r.Bind("d")
	require.NoError(t, err)
	f.Advance(10)
	got, err := h.Now()
	require.NoError(t, err, "just inside the range")
	require.Equal(t, int64(math.MaxInt64), got)
	f.Advance(1)
	_, err = h.Now()
	requireClockErr(t, err, ErrClockOverflow, "d")
	require.ErrorIs(t, err, clock.ErrOverflow)
	require.NotErrorIs(t, err, ErrClockUnavailable)
	// The timestamp arithmetic's cause lies beneath the clock operation.
	cause := clockCause(t, err)
	require.Contains(t, cause.Error(), "clock: project: result of logical start 9223372036854775797")
	require.Equal(t, `read domain "d" generation 1: `+ErrClockOverflow.Error()+": "+cause.Error(), err.Error())
}

func TestReadsAllocateNothing(t *testing.T) {
	for _, lc := range []Lifecycle{paced(1, 60, 0), paced(1, 1, 0), paced(1, 1.0/3, 0), unpaced(1, 0)} {
		r := NewRegistry(timesource.System())
		install(t, r, "d", lc)
		h, err := r.Bind("d")
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := h.Now(); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Snapshot(); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%s rate %v", lc.State, lc.Mapping.Rate)
	}
}
