package clockrt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestForgedProgressDoesNotFreezeGenuineTicks(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	// At wall base+5s the installed mapping is at logical base−5s: tick 6.
	f.Set(base + 5*second)
	ok, err := r.AcceptProgress("a", report(1, 6, base+5*second))
	require.NoError(t, err)
	require.True(t, ok)

	tenYears := int64(10 * 365 * 24 * time.Hour)
	forged := []struct {
		name string
		edit func(*ProgressReport)
	}{
		{"tick 1e9, boundary 0, UTC ten years ahead", func(p *ProgressReport) {
			p.ID, p.Boundary, p.AuthorityUTC = 1_000_000_000, 0, base+tenYears
		}},
		{"tick 1e9 on its boundary", func(p *ProgressReport) {
			p.ID = 1_000_000_000
			p.Boundary = base - 10*second + int64(p.ID-1)*second
		}},
		{"the next tick, mis-aligned", func(p *ProgressReport) { p.Boundary++ }},
		{"the next tick, boundary 0", func(p *ProgressReport) { p.Boundary = 0 }},
		{"the next tick, UTC ten years ahead", func(p *ProgressReport) { p.AuthorityUTC = base + tenYears }},
		{"a tick whose boundary overflows", func(p *ProgressReport) { p.ID = 1 << 62 }},
	}
	for _, c := range forged {
		t.Run(c.name, func(t *testing.T) {
			rep := report(1, 6, base+5*second)
			c.edit(&rep)
			ok, err := r.AcceptProgress("a", rep)
			requireClockErr(t, err, ErrImplausibleProgress, "d")
			require.False(t, ok)
			require.Equal(t, uint64(6), r.Progress("d").ID)
		})
	}
	// The genuine ticks after the forgeries are accepted.
	for id := uint64(7); id <= 9; id++ {
		now := base + int64(id-1)*second
		f.Set(now)
		ok, err := r.AcceptProgress("a", report(1, id, now))
		require.NoError(t, err)
		require.True(t, ok, "tick %d", id)
		require.Equal(t, report(1, id, now).Tick(), r.Progress("d"))
	}
}

func TestProgressToleranceBoundaries(t *testing.T) {
	const offset = 500 * time.Millisecond
	ms := int64(time.Millisecond)
	cases := []struct {
		name string
		rate float64
		now  int64 // this node's UTC
		id   uint64
		utc  int64
		ok   bool
	}{
		// Rate 1: tick 11 is due at wall base+10s, so plausible from
		// base+9.5s on.
		{"tick at the tolerance", 1, base + 9500*ms, 11, base, true},
		{"tick just inside the tolerance", 1, base + 9500*ms + 1, 11, base, true},
		{"tick just outside the tolerance", 1, base + 9500*ms - 1, 11, base, false},
		{"the tick due here", 1, base + 10*second, 11, base, true},
		// Rate 2: the same offset admits twice the logical time, so tick
		// 11 (due at base+5s) is plausible from base+4.5s on.
		{"rate 2, tick at the tolerance", 2, base + 4500*ms, 11, base, true},
		{"rate 2, tick just outside the tolerance", 2, base + 4500*ms - 1, 11, base, false},
		// Authority UTC: at most the offset ahead of this node's.
		{"UTC at the tolerance", 1, base, 1, base + 500*ms, true},
		{"UTC just inside the tolerance", 1, base, 1, base + 500*ms - 1, true},
		{"UTC just outside the tolerance", 1, base, 1, base + 500*ms + 1, false},
		{"UTC behind this node's", 1, base, 1, base - 3600*second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, f := newFakeRegistry(t)
			require.Equal(t, offset, r.MaxClockOffset(), "the default")
			install(t, r, "d", paced(1, c.rate, 1))
			f.Set(c.now)
			ok, err := r.AcceptProgress("a", report(1, c.id, c.utc))
			if !c.ok {
				requireClockErr(t, err, ErrImplausibleProgress, "d")
				require.False(t, ok)
				return
			}
			require.NoError(t, err)
			require.True(t, ok)
		})
	}
}

func TestMaxClockOffsetIsConfigurable(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	f.Set(base)
	r.SetMaxClockOffset(2 * time.Second) // tick 3 is due at base+2s
	ok, err := r.AcceptProgress("a", report(1, 3, base))
	require.NoError(t, err)
	require.True(t, ok)
	r.SetMaxClockOffset(-time.Second)
	require.Zero(t, r.MaxClockOffset(), "a negative offset is zero")
	_, err = r.AcceptProgress("a", report(1, 2, base+1))
	requireClockErr(t, err, ErrImplausibleProgress, "d")
}
