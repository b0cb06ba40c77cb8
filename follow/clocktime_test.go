package follow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/wire"
)

// at returns the instant d after t0.
func at(d time.Duration) time.Time { return time.Unix(0, t0).UTC().Add(d) }

// sixty is a paced clock started at t0 at TIME RATE 60, ticking every
// second of logical time with a 100ms skew.
var sixty = clock.Observed{Generation: 1, State: clock.Paced, Period: 1e9, Skew: 1e8, LogicalStart: t0, WallStartedAt: t0, Rate: 60}

// The followed clock answers in time.Time and time.Duration: logical time
// rounds down, waits round up, instants and waits outside what the types
// hold are errors, never wrapped values.
func TestClockInGoTypes(t *testing.T) {
	stopped := Clock{Observed: clock.Observed{Generation: 1, State: clock.Stopped}}
	unpaced := Clock{Observed: clock.Observed{Generation: 1, State: clock.Unpaced}}
	slow := clock.Observed{Generation: 1, State: clock.Paced, Period: 1e9, LogicalStart: t0, WallStartedAt: t0, Rate: 0.5}
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)

	t.Run("LogicalAt", func(t *testing.T) {
		tests := []struct {
			name string
			c    Clock
			utc  time.Time
			want time.Time
			err  error
		}{
			{"paced", Clock{Observed: sixty}, at(1500 * time.Millisecond), at(90 * time.Second), nil},
			{"rounds down", Clock{Observed: sixty}, at(1), at(60), nil},
			{"unpaced is utc", unpaced, at(time.Hour), at(time.Hour), nil},
			{"stopped", stopped, at(0), time.Time{}, clock.ErrNotReadable},
			{"utc out of range", Clock{Observed: sixty}, far, time.Time{}, clock.ErrOverflow},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.c.LogicalAt(tt.utc)
				if tt.err != nil {
					require.ErrorIs(t, err, tt.err)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
				require.Equal(t, time.UTC, got.Location())
			})
		}
	})

	t.Run("WaitUntil", func(t *testing.T) {
		tests := []struct {
			name        string
			c           Clock
			utc, target time.Time
			want        time.Duration
			err         error
		}{
			{"paced", Clock{Observed: sixty}, at(1500 * time.Millisecond), at(2 * time.Minute), 500 * time.Millisecond, nil},
			{"rounds up", Clock{Observed: sixty}, at(0), at(61), 2, nil},
			{"reached", Clock{Observed: sixty}, at(time.Second), at(time.Second), 0, nil},
			{"unpaced", unpaced, at(0), at(time.Minute), time.Minute, nil},
			{"stopped", stopped, at(0), at(time.Second), 0, clock.ErrNotReadable},
			// 5e18ns of logical time at rate 0.5 is 1e19ns of wall time:
			// a uint64 but not a time.Duration.
			{"longer than a Duration", Clock{Observed: slow}, at(0), time.Unix(0, t0+5e18), 0, clock.ErrOverflow},
			{"target out of range", Clock{Observed: sixty}, at(0), far, 0, clock.ErrOverflow},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.c.WaitUntil(tt.utc, tt.target)
				if tt.err != nil {
					require.ErrorIs(t, err, tt.err)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tt.want, got)
			})
		}
	})
}

// The admission window: Window reconstructs it for a UTC instant, Admits
// for the newest received tick, and both admit within the skew of the
// reached centers only.
func TestClockAdmission(t *testing.T) {
	w, err := Clock{Observed: sixty}.Window(at(1500 * time.Millisecond)) // logical t0+90s
	require.NoError(t, err)
	require.Equal(t, at(90*time.Second), w.Newest())
	require.Equal(t, at(0), w.Oldest())
	require.Equal(t, 100*time.Millisecond, w.Skew())
	require.Equal(t, time.Second, w.Period())
	lo, hi := w.Bounds()
	require.Equal(t, at(-100*time.Millisecond), lo)
	require.Equal(t, at(90*time.Second+100*time.Millisecond), hi)
	for _, tt := range []struct {
		ts   time.Time
		want bool
	}{
		{at(90 * time.Second), true},
		{at(90*time.Second + 100*time.Millisecond), true},
		{at(90*time.Second + 101*time.Millisecond), false}, // past the newest reached center
		{at(45*time.Second - 100*time.Millisecond), true},
		{at(45*time.Second + 500*time.Millisecond), false}, // between centers
		{time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), false},
	} {
		require.Equal(t, tt.want, w.Admits(tt.ts), "window admits %s", tt.ts)
	}
	_, err = Clock{Observed: clock.Observed{Generation: 1, State: clock.Unpaced}}.Window(at(0))
	require.ErrorIs(t, err, clock.ErrNotReadable)
	require.False(t, Window{}.Admits(at(0)), "the zero Window admits nothing")

	tick := func(gen, id uint64) Tick {
		return Tick{Generation: gen, ID: id, Boundary: t0 + int64(id-1)*1e9}
	}
	tests := []struct {
		name string
		c    Clock
		ts   time.Time
		want bool
	}{
		{"at the newest tick", Clock{Observed: sixty, Tick: tick(1, 4)}, at(3 * time.Second), true},
		{"within its skew", Clock{Observed: sixty, Tick: tick(1, 4)}, at(3*time.Second + 100*time.Millisecond), true},
		{"past the newest tick", Clock{Observed: sixty, Tick: tick(1, 4)}, at(4 * time.Second), false},
		{"an older center", Clock{Observed: sixty, Tick: tick(1, 4)}, at(time.Second - 50*time.Millisecond), true},
		{"between centers", Clock{Observed: sixty, Tick: tick(1, 4)}, at(1500 * time.Millisecond), false},
		{"no tick yet", Clock{Observed: sixty}, at(0), false},
		{"tick of another generation", Clock{Observed: sixty, Tick: tick(2, 4)}, at(0), false},
		{"stopped", Clock{Observed: clock.Observed{Generation: 1, State: clock.Stopped}, Tick: tick(1, 4)}, at(0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.c.Admits(tt.ts))
		})
	}
}

// A followed clock is found by its name as NSPL takes it: any case, bare
// or backtick-quoted.
func TestFollowClockNameIsCaseInsensitive(t *testing.T) {
	f := NewFollow(wire.ErrClosed)
	f.Attached("prod", 1, paced(1))
	f.Apply(wire.Frame{Domain: "prod", Attachment: 1, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 1, Boundary: t0}})
	for _, name := range []string{"prod", "Prod", "PROD", "`pRoD`"} {
		c, ok := f.Clock(name)
		require.True(t, ok, name)
		require.Equal(t, "prod", c.Domain)
		require.Equal(t, uint64(1), c.Tick.ID)
	}
	for _, name := range []string{"dev", "", "pro d", "prod.x"} {
		_, ok := f.Clock(name)
		require.False(t, ok, name)
	}
}
