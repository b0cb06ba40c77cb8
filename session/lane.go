package session

import (
	"context"
	"sync"

	"github.com/nspl-dev/nspl/internal/explore"
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
// tick rate.
//
// The lane is the session's one ordered stream: an attach queues its
// reply's place (putReply) before delivery of the attachment starts, so
// every frame of an attachment lies behind its reply in the queue, as
// delivery order rule 1 has it. The reply itself goes to the request
// (Exec); next passes over its place, and take returns it to a reader of
// the whole stream. An attachment has at most one reply place, taken or
// withdrawn with its frames (purge). The lane is therefore bounded by
// capacity plus twice the number of attachments, whatever the clock rate
// or consumer speed.
//
// The lane allocates nothing per frame once warm: the queue's array is kept
// and reused (the unread entries are entries[head:], compacted to the front
// when an append would otherwise grow it), a state, error or end frame is
// held in a box the lane keeps one of for the next (spare), and the
// wake-ups are one-slot channels made once. An entry is two words, so the
// array a burst of frames grew costs little once the lane is idle again,
// and boxes beyond the spare are released as their frames are taken.
//
// A wake is a token, not a broadcast: a signal is sent only while someone
// waits, and a woken waiter that leaves work behind for other waiters
// passes the token on, so each waiter is woken in turn. Close closes both
// wake-ups, so a waiter selects on its wake-up and its context only, and no
// signal is sent once closed. A reader of the context readers keep using
// (the watch) does not select at all: it waits on its wake-up alone, and
// the watch's end, noticed by one callback for the lane, wakes those
// readers in turn. Each tick then costs a reader one channel receive, not a
// select over a Done channel that, in a server, every session's reader may
// share.
type lane struct {
	// What every tick touches, its putTick and the reader's next, comes
	// first and fills the lane's first cache line: the counts are int32
	// to fit (a lane holds at most capacity plus one entry per attachment).
	mu           sync.Mutex
	closed       bool
	watchEnded   bool
	wantChange   bool // changed is not nil
	readyWaiters int32
	watchWaiters int32
	head         int32 // entries[:head] are taken and zeroed
	entries      []laneEntry
	ready        chan struct{} // one-slot wake of a reader waiting for an entry; closed by close
	watchDone    <-chan struct{}

	// inline is the queue's first array, on the lane's second line: a
	// lane that never holds more than two entries, as a follower of one
	// clock, keeps its entries there. Arrays of one or two entries made
	// apart from their lanes, as 10,000 sessions' first ticks make them,
	// would share cache lines across lanes read by different processors.
	inline [2]laneEntry

	// The watch is the context readers wait on most: a reader of it waits
	// on ready alone, which is cheaper than a select with its Done
	// channel, and its end wakes those readers in turn through ready
	// (watchEnded, passOnLocked). watchDone is its Done channel, unwatch
	// stops its callback (watchers, awaited by close), watchWaiters counts
	// the readers waiting on it alone, and lastDone is the Done channel of
	// the last reader that selected, which becomes the watch when it waits
	// again.
	lastDone <-chan struct{}
	unwatch  func() bool
	watchers sync.WaitGroup

	// changed is created by an observer that must not take a reader's
	// wake (a test waiting for a queued frame), with wantChange, and
	// closed by the next added entry; nil, and free, otherwise.
	changed chan struct{}

	spare       *wire.Frame // an empty box for the next frame pushed, or nil
	frames      int         // state, error and end frames and events in entries[head:]
	replies     int         // reply places in entries[head:]
	capacity    int
	room        chan struct{} // one-slot wake of a writer waiting for room; closed by close
	roomWaiters int32
	// taken counts the entries take has returned, modulo 2³², for a
	// driver of virtual time (drained, Session.Settled).
	taken uint32

	// events holds the replies, rows and posts of the event entries in
	// entries[head:], in the same order; made by the first event, so a
	// lane read only for frames holds none.
	events *eventQueue
}

// eventQueue is a lane's queue of events: items[head:] are unread, and the
// array is reused once they are all taken.
type eventQueue struct {
	items []*streamEntry
	head  int
}

// streamEntry is an event of the stream: a submitted request's reply, a
// rows chunk or a post. A reply an attach placed before the request ended
// is not ready until the request fills it (fill); a reader of the whole
// stream waits at it, so nothing behind it is taken before it.
type streamEntry struct {
	ev    Event
	ready bool
}

// laneEntry is a state, error or end frame (frame), an attachment's tick
// slot (frame is nil), the place of the attachment's attach reply that
// Exec returned (frame is replyPlace), or an event (frame is eventPlace,
// att is nil, the event is the lane's next in events).
type laneEntry struct {
	att   *attachment
	frame *wire.Frame
}

// replyPlace and eventPlace are the frames of entries that hold an Exec
// attach reply's place and an event's; they are never written, and no
// frame is boxed in them.
var (
	replyPlace = new(wire.Frame)
	eventPlace = new(wire.Frame)
)

// What a reader takes (take): frames alone, frames and the places of Exec's
// attach replies, or the whole stream of frames and events.
type takeMode uint8

const (
	takeFrames takeMode = iota
	takePlaces
	takeEvents
)

func newLane(capacity int) *lane {
	l := new(lane)
	l.init(capacity)
	return l
}

// init readies a zero lane for use, one that holds at most capacity state,
// error and end frames; a Session holds its lane in place (Session.lane).
func (l *lane) init(capacity int) {
	l.capacity = capacity
	l.entries = l.inline[:0]
	l.ready = make(chan struct{}, 1)
	l.room = make(chan struct{}, 1)
}

// next removes and returns the first frame, waiting for one until ctx ends
// or the lane closes. A frame already queued is returned even when ctx has
// ended. The reply places and events before it are removed and passed
// over: a reader of frames has the replies from the requests.
func (l *lane) next(ctx context.Context) (wire.Frame, error) {
	f, _, _, err := l.take(ctx, takeFrames)
	return f, err
}

// nextEvent removes and returns the first event or frame of the stream,
// waiting as next does; the places of Exec's attach replies are passed
// over.
func (l *lane) nextEvent(ctx context.Context) (Event, error) {
	f, _, se, err := l.take(ctx, takeEvents)
	if err != nil {
		return Event{}, err
	}
	if se != nil {
		return se.ev, nil
	}
	return Event{Kind: EventFrame, Frame: f}, nil
}

// take removes and returns the first entry of the stream that mode takes,
// waiting as next does, and passes over the others. With takePlaces, the
// place of an Exec attach reply is an entry too: take returns it as reply
// true with a frame that names only the attachment (Domain and
// Attachment). With takeEvents, an event is returned as se. Every mode
// waits at a reply not yet filled, so nothing behind it is taken first.
func (l *lane) take(ctx context.Context, mode takeMode) (f wire.Frame, reply bool, se *streamEntry, err error) {
	explore.Yield()
	done := ctx.Done()
	l.mu.Lock()
	woken := false
	for {
		if l.closed {
			l.mu.Unlock()
			return wire.Frame{}, false, nil, ErrClosed
		}
		if l.unreadLocked() {
			e := &l.entries[l.head]
			switch a := e.att; e.frame {
			case nil:
				f = wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameTick, Tick: a.slot.tick, Reading: a.slot.reading}
				a.slot = nil
			case replyPlace:
				f, reply = wire.Frame{Domain: a.domain, Attachment: a.id}, true
				l.replies--
			case eventPlace:
				q := l.events
				se = q.items[q.head]
				q.items[q.head] = nil
				q.head++
				if q.head == len(q.items) {
					q.items, q.head = q.items[:0], 0
				}
				l.frames--
				l.signalRoomLocked()
			default:
				f = *e.frame
				l.releaseLocked(e.frame)
				l.frames--
				l.signalRoomLocked()
			}
			*e = laneEntry{}
			l.head++
			if int(l.head) == len(l.entries) {
				l.entries, l.head = l.entries[:0], 0
			}
			if reply && mode != takePlaces || se != nil && mode != takeEvents {
				f, reply, se = wire.Frame{}, false, nil
				continue
			}
			if l.unreadLocked() && l.readyWaiters > 0 {
				signal(l.ready) // another reader may take the next entry
			}
			l.taken++
			l.mu.Unlock()
			return f, reply, se, nil
		}
		if err := ctx.Err(); err != nil {
			// The token may have been sent to this reader as it gave up,
			// or be meant for readers of the ended watch: pass it on.
			l.passOnLocked()
			l.mu.Unlock()
			return wire.Frame{}, false, nil, err
		}
		if woken {
			l.passOnLocked() // a token for the ended watch's readers
		}
		alone := l.waitsAloneLocked(ctx, done)
		watcher := alone && done != nil
		l.readyWaiters++
		if watcher {
			l.watchWaiters++
		}
		l.mu.Unlock()
		if alone {
			<-l.ready
		} else {
			select {
			case <-l.ready:
			case <-done:
			}
		}
		l.mu.Lock()
		l.readyWaiters--
		if watcher {
			l.watchWaiters--
		}
		woken = true
	}
}

// unreadLocked reports whether the first unread entry may be taken: there
// is one, and it is no reply still waiting for its request to fill it.
func (l *lane) unreadLocked() bool {
	if int(l.head) >= len(l.entries) {
		return false
	}
	return l.entries[l.head].frame != eventPlace || l.events.items[l.events.head].ready
}

// passOnLocked hands the wake token to another waiting reader when one has
// something to find: an unread entry, or the end of the watched context it
// waits on alone.
func (l *lane) passOnLocked() {
	if !l.closed && l.readyWaiters > 0 && (l.unreadLocked() || l.watchEnded && l.watchWaiters > 0) {
		signal(l.ready)
	}
}

// waitsAloneLocked reports whether a reader of ctx, which has not ended,
// may wait on the ready wake-up alone instead of selecting on it and done,
// ctx's Done channel: when done is nil, or when ctx is the lane's watch,
// whose end wakes the lane's readers. A reader that waits with the same
// context twice in a row makes it the watch, unless readers of the current
// watch still wait; a context used once is not watched.
func (l *lane) waitsAloneLocked(ctx context.Context, done <-chan struct{}) bool {
	switch {
	case done == nil, done == l.watchDone:
		return true
	case done == l.lastDone && l.watchWaiters == 0:
		l.watchLocked(ctx, done)
		return true
	}
	l.lastDone = done
	return false
}

// watchLocked makes ctx, whose Done channel is done, the lane's watch: when
// it ends, the readers waiting on it are woken in turn (passOnLocked).
func (l *lane) watchLocked(ctx context.Context, done <-chan struct{}) {
	l.unwatchLocked()
	l.watchDone, l.watchEnded, l.lastDone = done, false, nil
	l.watchers.Add(1)
	l.unwatch = context.AfterFunc(ctx, func() {
		defer l.watchers.Done()
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.watchDone == done {
			l.watchEnded = true
			l.passOnLocked()
		}
	})
}

// unwatchLocked ends the lane's watch. A callback already started finds
// the watch gone and ends on its own; close waits for it.
func (l *lane) unwatchLocked() {
	if l.unwatch != nil && l.unwatch() {
		l.watchers.Done()
	}
	l.unwatch, l.watchDone, l.watchEnded = nil, nil, false
}

// pushFrame appends a state, error or end frame, waiting for room until ctx ends or
// the lane closes.
func (l *lane) pushFrame(ctx context.Context, att *attachment, f wire.Frame) error {
	explore.Yield()
	l.mu.Lock()
	if err := l.roomLocked(ctx); err != nil {
		l.mu.Unlock()
		return err
	}
	box := l.spare
	if box == nil {
		box = new(wire.Frame)
	}
	l.spare = nil
	*box = f
	l.appendLocked(laneEntry{att: att, frame: box})
	l.mu.Unlock()
	return nil
}

// pushEvent appends an event, waiting for room as pushFrame does: events
// count against the lane's capacity with the state, error and end frames.
func (l *lane) pushEvent(ctx context.Context, se *streamEntry) error {
	explore.Yield()
	l.mu.Lock()
	if err := l.roomLocked(ctx); err != nil {
		l.mu.Unlock()
		return err
	}
	if l.events == nil {
		l.events = new(eventQueue)
	}
	l.events.items = append(l.events.items, se)
	l.appendLocked(laneEntry{frame: eventPlace})
	l.mu.Unlock()
	return nil
}

// roomLocked waits until the lane has room for one more frame or event and
// counts it, or returns ErrClosed or ctx's error. It is called and returns
// with l.mu held.
func (l *lane) roomLocked(ctx context.Context) error {
	for {
		if l.closed {
			return ErrClosed
		}
		if l.frames < l.capacity {
			l.frames++
			if l.frames < l.capacity && l.roomWaiters > 0 {
				signal(l.room) // room is left for another writer
			}
			return nil
		}
		l.roomWaiters++
		l.mu.Unlock()
		err := wait(ctx, l.room)
		l.mu.Lock()
		l.roomWaiters--
		if err != nil {
			if !l.closed && l.frames < l.capacity && l.roomWaiters > 0 {
				signal(l.room)
			}
			return err
		}
	}
}

// fill completes the reply se, an event placed before its request ended,
// and wakes a reader waiting at it.
func (l *lane) fill(se *streamEntry, ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	se.ev, se.ready = ev, true
	if l.unreadLocked() && l.readyWaiters > 0 {
		signal(l.ready)
	}
}

// putTick places the tick frame of rec, which is not nil, in the
// attachment's tick slot: it replaces the contents of a slot still queued,
// or queues the slot at the end of the lane. It never waits.
func (l *lane) putTick(att *attachment, rec *tickRecord) {
	explore.Yield()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	queued := att.slot != nil
	att.slot = rec
	if !queued {
		l.appendLocked(laneEntry{att: att})
	}
}

// putReply queues the place of att's attach reply at the end of the lane,
// ahead of every frame of att. It never waits.
func (l *lane) putReply(att *attachment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.appendLocked(laneEntry{att: att, frame: replyPlace})
	l.replies++
}

// appendLocked queues e at the end and wakes a reader. It reuses the
// queue's array: when the array is full and entries at its front were
// taken, the unread entries move to the front instead of growing it.
func (l *lane) appendLocked(e laneEntry) {
	if len(l.entries) == cap(l.entries) && l.head > 0 {
		n := copy(l.entries, l.entries[l.head:])
		clear(l.entries[n:])
		l.entries, l.head = l.entries[:n], 0
	}
	l.entries = append(l.entries, e)
	if l.readyWaiters > 0 {
		signal(l.ready)
	}
	if l.wantChange {
		close(l.changed)
		l.changed, l.wantChange = nil, false
	}
}

// withdrawTick removes the attachment's tick slot if the consumer has not
// taken it yet.
func (l *lane) withdrawTick(att *attachment) {
	explore.Yield()
	l.mu.Lock()
	defer l.mu.Unlock()
	if att.slot == nil {
		return
	}
	l.removeLocked(func(e laneEntry) bool { return e.att == att && e.frame == nil })
}

// purge removes every unread frame of the attachment, its tick slot and its
// reply's place included.
func (l *lane) purge(att *attachment) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removeLocked(func(e laneEntry) bool { return e.att == att })
}

func (l *lane) removeLocked(match func(laneEntry) bool) {
	unread := l.entries[l.head:]
	kept := unread[:0]
	removedFrames := 0
	for _, e := range unread {
		if !match(e) {
			kept = append(kept, e)
			continue
		}
		switch e.frame {
		case nil:
			e.att.slot = nil
		case replyPlace:
			l.replies--
		case eventPlace: // never matched: an event names no attachment
		default:
			l.releaseLocked(e.frame)
			removedFrames++
		}
	}
	clear(unread[len(kept):])
	l.entries = l.entries[:int(l.head)+len(kept)]
	if int(l.head) == len(l.entries) {
		l.entries, l.head = l.entries[:0], 0
	}
	if removedFrames > 0 {
		l.frames -= removedFrames
		l.signalRoomLocked()
	}
}

// len returns the number of unread frames, events and queued tick slots;
// the places of Exec's attach replies are not counted.
func (l *lane) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries) - int(l.head) - l.replies
}

// drained returns the number of unread entries (as len counts them) and
// how many take has returned so far, read together.
func (l *lane) drained() (unread int, taken uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries) - int(l.head) - l.replies, l.taken
}

// close ends the lane: waiting readers and writers return ErrClosed and the
// unread frames are discarded. It returns once the watch's callback, if
// started, has ended.
func (l *lane) close() {
	defer l.watchers.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.unwatchLocked()
	for _, e := range l.entries[l.head:] {
		if e.frame == nil {
			e.att.slot = nil
		}
	}
	l.entries, l.head, l.spare = nil, 0, nil
	l.events = nil
	l.frames, l.replies = 0, 0
	close(l.ready)
	close(l.room)
	if l.wantChange {
		close(l.changed)
		l.changed, l.wantChange = nil, false
	}
}

// releaseLocked empties the box of a taken or removed frame and keeps it as
// the spare unless the lane has one.
func (l *lane) releaseLocked(box *wire.Frame) {
	if l.spare == nil {
		*box = wire.Frame{}
		l.spare = box
	}
}

func (l *lane) signalRoomLocked() {
	if !l.closed && l.roomWaiters > 0 {
		signal(l.room)
	}
}

// signal puts the wake token in c unless it is already there. c must be
// open: the lane signals only while it is not closed.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wait waits for the wake token of c (or c's close) or the end of ctx,
// whose error it returns. Writers waiting for room wait with it.
func wait(ctx context.Context, c chan struct{}) error {
	done := ctx.Done()
	if done == nil {
		<-c
		return nil
	}
	select {
	case <-c:
		return nil
	case <-done:
		return ctx.Err()
	}
}
