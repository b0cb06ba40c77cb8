package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// TestStepWatch: a forward step of UTC against the monotonic clock by more
// than half the max clock offset makes the clock suspect, a step back or a
// smaller one does not, and a peer's acceptance of a report read no earlier
// than the suspect look ends the suspicion.
func TestStepWatch(t *testing.T) {
	const maxOffset = 500 * time.Millisecond
	tol := maxOffset / 2
	for _, tc := range []struct {
		name    string
		step    time.Duration
		suspect bool
	}{
		{"no step", 0, false},
		{"a step back", -time.Hour, false},
		{"forward by the tolerance", tol, false},
		{"forward by just over the tolerance", tol + 1, true},
		{"forward by a lot", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := timesource.NewFake(1_000_000_000)
			clock := timesource.NewAdjustable(fake)
			w := newStepWatch(clock, maxOffset, quietLogger())
			require.False(t, w.look(), "the first look only primes")
			fake.Advance(time.Second) // time passing is no step
			require.False(t, w.look())
			clock.Step(tc.step)
			require.Equal(t, tc.suspect, w.look())
			fake.Advance(time.Second)
			require.Equal(t, tc.suspect, w.look(), "suspect until confirmed, however long")
			if !tc.suspect {
				return
			}
			suspect := clock.Now() - int64(time.Second)
			require.False(t, w.confirm(suspect-1), "a report read before the step confirms nothing")
			require.True(t, w.look())
			require.True(t, w.confirm(suspect))
			require.False(t, w.look(), "confirmed")
		})
	}
}
