package cluster_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/internal/history"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// faultClockDomain is the paced domain the clock watchers of a nemesis run
// follow; the history clients never touch it.
const faultClockDomain = "clk"

// attachLog is one attachment of a clock watcher: the member it was made
// on, the clock its attach reply carried, and every frame it received
// with when (on the run's recorder clock).
type attachLog struct {
	node  string
	clock clock.Observed
	mu    sync.Mutex
	fr    []wire.Frame
	at    []int64
}

func (l *attachLog) add(f wire.Frame, at int64) {
	l.mu.Lock()
	l.fr, l.at = append(l.fr, f), append(l.at, at)
	l.mu.Unlock()
}

func (l *attachLog) frames() ([]wire.Frame, []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.Frame(nil), l.fr...), append([]int64(nil), l.at...)
}

// clockWatchers attaches to faultClockDomain through every member, as an
// in-process client of the member would, and attaches again on each new
// incarnation of a member and whenever its attachment ends. Its
// goroutines run until ctx ends; wait for them with wg.
type clockWatchers struct {
	mu   sync.Mutex
	logs []*attachLog
}

func (w *clockWatchers) all() []*attachLog {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*attachLog(nil), w.logs...)
}

// watch follows member name's attachments until ctx ends.
func (w *clockWatchers) watch(ctx context.Context, wg *sync.WaitGroup, h *testcluster.Cluster, name string, rec *history.Recorder) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			m := h.Member(name)
			if m == nil {
				time.Sleep(20 * time.Millisecond) // killed: wait for its restart
				continue
			}
			s := session.New(m.Node(), session.Options{})
			l := w.attach(ctx, s, name)
			for l != nil && ctx.Err() == nil && h.Member(name) == m {
				fctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				f, err := s.NextFrame(fctx)
				cancel()
				if err == nil {
					l.add(f, rec.Now())
					if f.Kind == wire.FrameEnd {
						break
					}
				} else if fctx.Err() == nil {
					break // the session ended
				}
			}
			_ = s.Close()
			if l == nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
}

// attach attaches s to the clock domain and returns the attachment's log,
// nil when the member refused (not caught up, or the run just began).
func (w *clockWatchers) attach(ctx context.Context, s *session.Session, name string) *attachLog {
	actx, cancel := context.WithTimeout(ctx, faultOpTimeout)
	defer cancel()
	rs, err := s.ExecText(actx, "USE "+faultClockDomain+"; ATTACH DOMAIN CLOCK;")
	if err != nil || len(rs) != 2 || rs[1].Clock == nil {
		return nil
	}
	l := &attachLog{node: name, clock: *rs[1].Clock}
	w.mu.Lock()
	w.logs = append(w.logs, l)
	w.mu.Unlock()
	return l
}

// tickKey is one tick of one generation.
type tickKey struct{ gen, id uint64 }

// clockViolations checks what the issue promises of the frames clients
// see, and returns one line per violation:
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
func clockViolations(logs []*attachLog) []string {
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
		see(fmt.Sprintf("attachment %d on %s", i, l.node), l.clock)
		fr, _ := l.frames()
		for _, f := range fr {
			if f.Kind == wire.FrameState {
				see(fmt.Sprintf("attachment %d on %s", i, l.node), f.Clock)
			}
		}
	}
	ticks := make(map[tickKey]wire.Tick)
	where := make(map[tickKey]string)
	for i, l := range logs {
		at := fmt.Sprintf("attachment %d on %s", i, l.node)
		fr, _ := l.frames()
		last := make(map[uint64]uint64)
		interrupted := false
		for j, f := range fr {
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

// tickResumption returns, per fault kind, the longest time from an
// episode's heal to the first tick an attachment on each member received
// after it (to the end of the run when none came), over the episodes and
// members: how long ticks took to resume everywhere after a heal.
func tickResumption(logs []*attachLog, eps []episode, end int64) map[string]time.Duration {
	byNode := make(map[string][]int64)
	for _, l := range logs {
		fr, at := l.frames()
		for i, f := range fr {
			if f.Kind == wire.FrameTick {
				byNode[l.node] = append(byNode[l.node], at[i])
			}
		}
	}
	nodes := make([]string, 0, len(byNode))
	for n, ts := range byNode {
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		nodes = append(nodes, n)
	}
	out := make(map[string]time.Duration)
	for _, e := range eps {
		for _, n := range nodes {
			ts := byNode[n]
			i := sort.Search(len(ts), func(i int) bool { return ts[i] >= e.healed })
			next := end
			if i < len(ts) {
				next = ts[i]
			}
			out[e.kind] = max(out[e.kind], time.Duration(next-e.healed))
		}
	}
	return out
}

// TestClockViolations: the checker of the frames names each broken
// promise and passes frames that keep them.
func TestClockViolations(t *testing.T) {
	paced := clock.Observed{Generation: 1, State: clock.Paced, Period: 10, LogicalStart: 1000}
	tick := func(gen, id uint64, boundary, authority int64) wire.Frame {
		return wire.Frame{Kind: wire.FrameTick, Tick: wire.Tick{Generation: gen, ID: id, Boundary: boundary, AuthorityUTC: authority}}
	}
	log := func(c clock.Observed, fr ...wire.Frame) *attachLog {
		return &attachLog{node: "n1", clock: c, fr: fr, at: make([]int64, len(fr))}
	}
	other := paced
	other.LogicalStart = 2000
	gen2 := clock.Observed{Generation: 2, State: clock.Paced, Period: 10, LogicalStart: 5000}
	cases := []struct {
		name string
		logs []*attachLog
		want int
	}{
		{"increasing ticks on their boundaries", []*attachLog{log(paced, tick(1, 1, 1000, 7), tick(1, 3, 1020, 9))}, 0},
		{"the same tick through two attachments", []*attachLog{log(paced, tick(1, 2, 1010, 8)), log(paced, tick(1, 2, 1010, 8))}, 0},
		{"a new generation starts its ids again", []*attachLog{log(paced, tick(1, 5, 1040, 7), wire.Frame{Kind: wire.FrameState, Clock: gen2}, tick(2, 1, 5000, 9))}, 0},
		{"a repeated id", []*attachLog{log(paced, tick(1, 2, 1010, 7), tick(1, 2, 1010, 7))}, 1},
		{"an id going back", []*attachLog{log(paced, tick(1, 3, 1020, 7), tick(1, 2, 1010, 8))}, 1},
		{"a boundary off the mapping", []*attachLog{log(paced, tick(1, 2, 1011, 7))}, 1},
		{"one tick produced twice", []*attachLog{log(paced, tick(1, 2, 1010, 7)), log(paced, tick(1, 2, 1010, 8))}, 1},
		{"two mappings for one generation", []*attachLog{log(paced), log(other)}, 1},
		{"a tick while interrupted", []*attachLog{log(paced, wire.Frame{Kind: wire.FrameInterrupted}, tick(1, 1, 1000, 7))}, 1},
		{"a tick after the clock resumed", []*attachLog{log(paced, wire.Frame{Kind: wire.FrameInterrupted}, wire.Frame{Kind: wire.FrameState, Clock: paced}, tick(1, 1, 1000, 7))}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clockViolations(tc.logs)
			if len(got) != tc.want {
				t.Fatalf("want %d violations, got %q", tc.want, got)
			}
		})
	}
}
