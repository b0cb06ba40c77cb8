package client

import (
	"context"
	"sync"

	"github.com/nspl-dev/nspl/wire"
)

// frameQueue holds the frames not read yet, coalesced per domain: the newest
// state, then the newest tick of it, then an end. A newer state withdraws an
// unread tick; an end replaces everything before it. So the queue holds at
// most three frames per followed domain, however slowly the caller reads.
type frameQueue struct {
	mu      sync.Mutex
	order   []string // domains with unread frames, oldest first
	pending map[string]*pendingFrames
	wake    chan struct{} // closed and replaced when a frame is queued
	closed  bool
}

type pendingFrames struct {
	state, tick, end *wire.Frame
	// after holds the frames of a later attachment of the same domain,
	// queued behind this one's end.
	after *pendingFrames
}

func (p *pendingFrames) empty() bool { return p.state == nil && p.tick == nil && p.end == nil }

func newFrameQueue() *frameQueue {
	return &frameQueue{pending: make(map[string]*pendingFrames), wake: make(chan struct{})}
}

func (q *frameQueue) push(f wire.Frame) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	p := q.pending[f.Domain]
	if p == nil {
		p = &pendingFrames{}
		q.pending[f.Domain] = p
		q.order = append(q.order, f.Domain)
	}
	for p.after != nil {
		p = p.after
	}
	if p.end != nil && f.Kind != wire.FrameEnd {
		p.after = &pendingFrames{}
		p = p.after
	}
	switch f.Kind {
	case wire.FrameState:
		p.state, p.tick = &f, nil
	case wire.FrameTick:
		p.tick = &f
	case wire.FrameEnd:
		p.state, p.tick, p.end = nil, nil, &f
	}
	close(q.wake)
	q.wake = make(chan struct{})
}

// withdraw drops the unread frames of domain.
func (q *frameQueue) withdraw(domain string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.pending[domain]; !ok {
		return
	}
	delete(q.pending, domain)
	for i, d := range q.order {
		if d == domain {
			q.order = append(q.order[:i], q.order[i+1:]...)
			break
		}
	}
}

func (q *frameQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.wake)
	}
}

// len returns the number of unread frames.
func (q *frameQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, p := range q.pending {
		for ; p != nil; p = p.after {
			for _, f := range []*wire.Frame{p.state, p.tick, p.end} {
				if f != nil {
					n++
				}
			}
		}
	}
	return n
}

// next returns the oldest domain's first unread frame, waiting for one.
func (q *frameQueue) next(ctx context.Context) (wire.Frame, error) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return wire.Frame{}, ErrClosed
		}
		if len(q.order) > 0 {
			d := q.order[0]
			p := q.pending[d]
			var f *wire.Frame
			switch {
			case p.state != nil:
				f, p.state = p.state, nil
			case p.tick != nil:
				f, p.tick = p.tick, nil
			default:
				f, p.end = p.end, nil
			}
			if p.empty() {
				if p.after != nil {
					q.pending[d] = p.after
				} else {
					delete(q.pending, d)
					q.order = q.order[1:]
				}
			}
			q.mu.Unlock()
			return *f, nil
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return wire.Frame{}, ctx.Err()
		}
	}
}
