package cluster_test

import (
	"context"
	"sort"
	"sync"
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

// attachments returns the logs as the checker takes them.
func attachments(logs []*attachLog) []history.Attachment {
	out := make([]history.Attachment, len(logs))
	for i, l := range logs {
		fr, _ := l.frames()
		out[i] = history.Attachment{Node: l.node, Clock: l.clock, Frames: fr}
	}
	return out
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
