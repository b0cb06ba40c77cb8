package node

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// refusalWindow is how often refusedProgress logs one domain's implausible
// reports at most.
const refusalWindow = 10 * time.Second

// refusedProgress counts the progress reports refused as implausible
// (clockrt.ErrImplausibleProgress) and logs them at most once per
// refusalWindow per domain: the first refusal of a window is logged with
// the number refused since the previous line, the others are only
// counted. A forging authority can therefore not flood the log. Its map
// holds only domains refused within the last window (the refusal needs an
// installed domain whose fence the report matched), so it stays bounded by
// the installed domains.
type refusedProgress struct {
	src    timesource.Source
	logger *slog.Logger

	mu      sync.Mutex
	total   uint64
	domains map[string]*refusalCount
}

type refusalCount struct {
	since      time.Duration // monotonic reading of the window's first line
	suppressed uint64        // refusals since that line
}

func newRefusedProgress(src timesource.Source, logger *slog.Logger) *refusedProgress {
	return &refusedProgress{src: src, logger: logger, domains: make(map[string]*refusalCount)}
}

// record counts one refusal of domain's report from node from.
func (r *refusedProgress) record(domain, from string, err error) {
	now := r.src.Monotonic()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	c, ok := r.domains[domain]
	if ok && now-c.since < refusalWindow {
		c.suppressed++
		return
	}
	refused := uint64(1)
	if ok {
		refused += c.suppressed
	}
	for d, other := range r.domains {
		if now-other.since >= refusalWindow && other.suppressed == 0 {
			delete(r.domains, d)
		}
	}
	r.domains[domain] = &refusalCount{since: now}
	r.logger.Warn("implausible progress refused; check the authority's clock or --max-clock-offset",
		"domain", domain, "from", from, "refused", refused, "window", refusalWindow, "err", err)
}

// count returns how many reports were refused as implausible.
func (r *refusedProgress) count() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}
