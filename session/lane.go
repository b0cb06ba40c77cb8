package session

import (
	"context"
	"sync"

	"github.com/nspl-dev/nspl/wire"
)

// lane is a session's control lane: the ordered queue of frames a consumer
// reads with NextFrame.
//
// It holds at most capacity state, error and end frames (a delivery task waits for
// room) and, beside them, at most one tick entry per attachment: the
// attachment's replaceable tick slot. A tick entry keeps its place in the
// queue while newer progress replaces its contents, until the consumer
// takes it, so a full lane never blocks a tick and never grows with the
// tick rate. The lane is therefore bounded by capacity plus the number of
// attachments, whatever the clock rate or consumer speed.
type lane struct {
	mu       sync.Mutex
	entries  []laneEntry
	frames   int // state, error and end entries in entries
	capacity int
	closed   bool
	// ready and room are created by a waiter and closed (then dropped) by
	// the next added entry or the next frame entry that leaves, so a lane
	// nobody waits on allocates nothing per frame.
	ready chan struct{}
	room  chan struct{}
}

// laneEntry is a state, error or end frame, or an attachment's tick slot.
type laneEntry struct {
	att   *attachment
	tick  bool
	frame wire.Frame // state, error and end entries only
}

func newLane(capacity int) *lane {
	return &lane{capacity: capacity}
}

// next removes and returns the first frame, waiting for one until ctx ends
// or the lane closes.
func (l *lane) next(ctx context.Context) (wire.Frame, error) {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return wire.Frame{}, ErrClosed
		}
		if len(l.entries) > 0 {
			e := l.entries[0]
			l.entries[0] = laneEntry{}
			l.entries = l.entries[1:]
			if len(l.entries) == 0 {
				l.entries = l.entries[:0:0]
			}
			f := e.frame
			if e.tick {
				f = e.att.slot
				e.att.slot = wire.Frame{}
				e.att.slotQueued = false
			} else {
				l.frames--
				l.signalRoomLocked()
			}
			l.mu.Unlock()
			return f, nil
		}
		if l.ready == nil {
			l.ready = make(chan struct{})
		}
		ready := l.ready
		l.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return wire.Frame{}, ctx.Err()
		}
	}
}

// pushFrame appends a state, error or end frame, waiting for room until ctx ends or
// the lane closes.
func (l *lane) pushFrame(ctx context.Context, att *attachment, f wire.Frame) error {
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return ErrClosed
		}
		if l.frames < l.capacity {
			l.entries = append(l.entries, laneEntry{att: att, frame: f})
			l.frames++
			l.signalReadyLocked()
			l.mu.Unlock()
			return nil
		}
		if l.room == nil {
			l.room = make(chan struct{})
		}
		room := l.room
		l.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// putTick places f in the attachment's tick slot: it replaces the contents
// of a slot still queued, or queues the slot at the end of the lane. It never
// waits.
func (l *lane) putTick(att *attachment, f wire.Frame) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	att.slot = f
	if !att.slotQueued {
		att.slotQueued = true
		l.entries = append(l.entries, laneEntry{att: att, tick: true})
		l.signalReadyLocked()
	}
}

// withdrawTick removes the attachment's tick slot if the consumer has not
// taken it yet.
func (l *lane) withdrawTick(att *attachment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !att.slotQueued {
		return
	}
	l.removeLocked(func(e laneEntry) bool { return e.att == att && e.tick })
}

// purge removes every unread frame of the attachment, its tick slot
// included.
func (l *lane) purge(att *attachment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(func(e laneEntry) bool { return e.att == att })
}

func (l *lane) removeLocked(match func(laneEntry) bool) {
	kept := l.entries[:0]
	removedFrames := 0
	for _, e := range l.entries {
		if !match(e) {
			kept = append(kept, e)
			continue
		}
		if e.tick {
			e.att.slot = wire.Frame{}
			e.att.slotQueued = false
		} else {
			removedFrames++
		}
	}
	clear(l.entries[len(kept):])
	l.entries = kept
	if removedFrames > 0 {
		l.frames -= removedFrames
		l.signalRoomLocked()
	}
}

// len returns the number of unread entries.
func (l *lane) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// close ends the lane: waiting readers and writers return ErrClosed and the
// unread frames are discarded.
func (l *lane) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	for _, e := range l.entries {
		if e.tick {
			e.att.slot = wire.Frame{}
			e.att.slotQueued = false
		}
	}
	l.entries = nil
	l.frames = 0
	l.signalReadyLocked()
	l.signalRoomLocked()
}

func (l *lane) signalReadyLocked() {
	if l.ready != nil {
		close(l.ready)
		l.ready = nil
	}
}

func (l *lane) signalRoomLocked() {
	if l.room != nil {
		close(l.room)
		l.room = nil
	}
}
