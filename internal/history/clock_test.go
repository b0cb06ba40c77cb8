package history

import (
	"testing"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/wire"
)

// TestCheckClock: the checker of the frames names each broken
// promise and passes frames that keep them.
func TestCheckClock(t *testing.T) {
	paced := clock.Observed{Generation: 1, State: clock.Paced, Period: 10, LogicalStart: 1000}
	tick := func(gen, id uint64, boundary, authority int64) wire.Frame {
		return wire.Frame{Kind: wire.FrameTick, Tick: wire.Tick{Generation: gen, ID: id, Boundary: boundary, AuthorityUTC: authority}}
	}
	log := func(c clock.Observed, fr ...wire.Frame) Attachment {
		return Attachment{Node: "n1", Clock: c, Frames: fr}
	}
	other := paced
	other.LogicalStart = 2000
	gen2 := clock.Observed{Generation: 2, State: clock.Paced, Period: 10, LogicalStart: 5000}
	cases := []struct {
		name string
		logs []Attachment
		want int
	}{
		{"increasing ticks on their boundaries", []Attachment{log(paced, tick(1, 1, 1000, 7), tick(1, 3, 1020, 9))}, 0},
		{"the same tick through two attachments", []Attachment{log(paced, tick(1, 2, 1010, 8)), log(paced, tick(1, 2, 1010, 8))}, 0},
		{"a new generation starts its ids again", []Attachment{log(paced, tick(1, 5, 1040, 7), wire.Frame{Kind: wire.FrameState, Clock: gen2}, tick(2, 1, 5000, 9))}, 0},
		{"a repeated id", []Attachment{log(paced, tick(1, 2, 1010, 7), tick(1, 2, 1010, 7))}, 1},
		{"an id going back", []Attachment{log(paced, tick(1, 3, 1020, 7), tick(1, 2, 1010, 8))}, 1},
		{"a boundary off the mapping", []Attachment{log(paced, tick(1, 2, 1011, 7))}, 1},
		{"one tick produced twice", []Attachment{log(paced, tick(1, 2, 1010, 7)), log(paced, tick(1, 2, 1010, 8))}, 1},
		{"two mappings for one generation", []Attachment{log(paced), log(other)}, 1},
		{"a tick while interrupted", []Attachment{log(paced, wire.Frame{Kind: wire.FrameInterrupted}, tick(1, 1, 1000, 7))}, 1},
		{"a tick after the clock resumed", []Attachment{log(paced, wire.Frame{Kind: wire.FrameInterrupted}, wire.Frame{Kind: wire.FrameState, Clock: paced}, tick(1, 1, 1000, 7))}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckClock(tc.logs)
			if len(got) != tc.want {
				t.Fatalf("want %d violations, got %q", tc.want, got)
			}
		})
	}
}
