package history

import (
	"fmt"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/wire"
)

// tickKey is one tick of one generation.
type tickKey struct{ gen, id uint64 }

// Attachment is what a client saw of one attachment to a domain's clock:
// the node it was made on, the clock its attach reply carried and the
// frames it received, in order.
type Attachment struct {
	Node   string
	Clock  clock.Observed
	Frames []wire.Frame
}

// CheckClock checks what the frames clients see promise of a domain's
// clock, and returns one line per violation:
//
//   - per attachment, tick ids strictly increase within a generation, and
//     no tick arrives between an interrupted frame and the state frame
//     that resumes the clock;
//   - every tick's boundary is origin + (id − 1) × period of its
//     generation's committed mapping (as attach replies and state frames
//     carry it), and every paced clock seen of one generation is that
//     mapping;
//   - no two ticks of one generation and id differ (boundary or authority
//     UTC), whichever attachments saw them.
func CheckClock(logs []Attachment) []string {
	var out []string
	mapping := make(map[uint64]clock.Observed)
	see := func(where string, c clock.Observed) {
		if c.State != clock.Paced {
			return
		}
		if m, ok := mapping[c.Generation]; ok && (m.LogicalStart != c.LogicalStart || m.Period != c.Period) {
			out = append(out, fmt.Sprintf("%s: generation %d seen paced from %d every %d ns and from %d every %d ns",
				where, c.Generation, m.LogicalStart, m.Period, c.LogicalStart, c.Period))
			return
		}
		mapping[c.Generation] = c
	}
	for i, l := range logs {
		see(fmt.Sprintf("attachment %d on %s", i, l.Node), l.Clock)
		for _, f := range l.Frames {
			if f.Kind == wire.FrameState {
				see(fmt.Sprintf("attachment %d on %s", i, l.Node), f.Clock)
			}
		}
	}
	ticks := make(map[tickKey]wire.Tick)
	where := make(map[tickKey]string)
	for i, l := range logs {
		at := fmt.Sprintf("attachment %d on %s", i, l.Node)
		last := make(map[uint64]uint64)
		interrupted := false
		for j, f := range l.Frames {
			switch f.Kind {
			case wire.FrameInterrupted:
				interrupted = true
			case wire.FrameState:
				interrupted = false
			case wire.FrameTick:
				tk := f.Tick
				if interrupted {
					out = append(out, fmt.Sprintf("%s: frame %d is tick %d of generation %d, delivered while the clock is interrupted", at, j, tk.ID, tk.Generation))
				}
				if tk.ID <= last[tk.Generation] {
					out = append(out, fmt.Sprintf("%s: frame %d is tick %d of generation %d after tick %d", at, j, tk.ID, tk.Generation, last[tk.Generation]))
				}
				last[tk.Generation] = max(last[tk.Generation], tk.ID)
				if m, ok := mapping[tk.Generation]; ok && tk.ID > 0 {
					if want := m.LogicalStart + int64(tk.ID-1)*int64(m.Period); tk.Boundary != want {
						out = append(out, fmt.Sprintf("%s: tick %d of generation %d has boundary %d, not origin + (id-1)×period = %d", at, tk.ID, tk.Generation, tk.Boundary, want))
					}
				}
				k := tickKey{tk.Generation, tk.ID}
				if prev, ok := ticks[k]; ok && prev != tk {
					out = append(out, fmt.Sprintf("tick %d of generation %d seen by %s as boundary %d authority UTC %d and by %s as boundary %d authority UTC %d",
						tk.ID, tk.Generation, where[k], prev.Boundary, prev.AuthorityUTC, at, tk.Boundary, tk.AuthorityUTC))
				} else if !ok {
					ticks[k], where[k] = tk, at
				}
			}
		}
	}
	return out
}
