package catalog

import (
	"sync"
	"sync/atomic"
)

// inflight counts the callers waiting on raft futures and refuses new ones
// once the node closes. Close needs it because hashicorp/raft never answers
// a future still queued when it shuts down: Close marks the count closed,
// waits for drained, and only then shuts raft down.
//
// It is one atomic word (the count shifted left by one, the closed flag in
// the low bit), so admitting a proposal costs one atomic add and finishing
// it another, where a read-write mutex and a wait group cost four or more
// on cache lines every writer shares. It is safe for concurrent use.
type inflight struct {
	state       atomic.Int64
	drainedOnce sync.Once
	drainedCh   chan struct{}
}

const inflightClosed = 1

func newInflight() *inflight { return &inflight{drainedCh: make(chan struct{})} }

// enter admits one caller, or reports false once close was called; an
// admitted caller must call exit exactly once.
func (p *inflight) enter() bool {
	if p.state.Add(2)&inflightClosed != 0 {
		p.exit()
		return false
	}
	return true
}

// exit ends one admitted caller's wait.
func (p *inflight) exit() {
	if p.state.Add(-2) == inflightClosed {
		p.drainedOnce.Do(func() { close(p.drainedCh) })
	}
}

// close refuses every later enter. It is idempotent.
func (p *inflight) close() {
	if old := p.state.Or(inflightClosed); old&^inflightClosed == 0 {
		p.drainedOnce.Do(func() { close(p.drainedCh) })
	}
}

// closed reports whether close was called.
func (p *inflight) closed() bool { return p.state.Load()&inflightClosed != 0 }

// drained is closed once close was called and every admitted caller has
// exited.
func (p *inflight) drained() <-chan struct{} { return p.drainedCh }
