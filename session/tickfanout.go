package session

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/explore"
	"github.com/nspl-dev/nspl/wire"
)

// tickFanout delivers the ticks of one installed domain (one runtime
// allocation) to every attachment of it in this process, whatever session
// holds it. One goroutine waits on the allocation's progress watch, so a
// tick wakes it once instead of every attachment's delivery task, and it
// fills each attachment's tick slot itself, taking the node's reading once
// for all of them. Ticks never wait (putTick), so one loop serves them all.
// State, error and end frames, which may wait for room on their lane, stay
// with each attachment's task, which runs only while there is such a
// change: the fan-out starts it (wake) when the installation, the
// generation's failure or the node's interruption changes, and it ends
// once caught up. While a
// task is changing what its client holds (busy) the fan-out leaves its
// attachment alone; the task reads the newest progress itself when done.
//
// The fan-outs are owned by the attachments: the first of an allocation
// starts its loop, the last one's release stops it and waits for it.
type tickFanout struct {
	obs    *clockrt.Observer // used by the loop only
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	atts []*attachment // each at its index at
	// tracked says the loop records its waits (park), for a driver of
	// virtual time (waiting): set when the session that starts the
	// fan-out runs on a timesource.Virtual, as every session of that node
	// does. On real time nothing steps the clock, and a tick costs no
	// record of it.
	tracked bool
	// parked is set while the loop waits for a change of what it last
	// read, whose notifications it waits on are waitInst and waitProg
	// (waiting).
	parked             bool
	waitInst, waitProg <-chan struct{}
}

// fanouts holds the running tick fan-outs by allocation.
var fanouts = struct {
	mu sync.Mutex
	m  map[*clockrt.Allocation]*tickFanout
}{m: make(map[*clockrt.Allocation]*tickFanout)}

// joinFanout adds a to the fan-out of its allocation, starting it when a is
// the first. queued is the accepted tick a's attach queued behind its reply
// (zero when none): a fan-out started for a offers only newer ticks, as a
// fan-out that runs already has offered every tick before a joined.
func joinFanout(a *attachment, queued clockrt.Tick) {
	alloc := a.obs.Allocation()
	fanouts.mu.Lock()
	defer fanouts.mu.Unlock()
	f := fanouts.m[alloc]
	if f == nil {
		ctx, cancel := context.WithCancel(context.Background())
		_, virtual := a.sess.src.(*timesource.Virtual)
		f = &tickFanout{obs: a.obs.Fork(), cancel: cancel, done: make(chan struct{}), tracked: virtual}
		fanouts.m[alloc] = f
		go f.run(ctx, queued)
	}
	f.mu.Lock()
	a.at = int32(len(f.atts))
	f.atts = append(f.atts, a)
	f.mu.Unlock()
	a.fanout = f
}

// leaveFanout removes a from its fan-out, stopping the fan-out and waiting
// for it when a was the last.
func leaveFanout(a *attachment) {
	f := a.fanout
	if f == nil {
		return
	}
	fanouts.mu.Lock()
	f.mu.Lock()
	// The last attachment takes a's place.
	end := len(f.atts) - 1
	moved := f.atts[end]
	f.atts[a.at], moved.at = moved, a.at
	f.atts[end] = nil
	f.atts = f.atts[:end]
	last := end == 0
	f.mu.Unlock()
	alloc := a.obs.Allocation()
	if last && fanouts.m[alloc] == f {
		delete(fanouts.m, alloc)
	}
	fanouts.mu.Unlock()
	if last {
		f.cancel()
		<-f.done
	}
}

// run is the fan-out's loop: on every wake it reads the newest progress,
// wakes every task when the installation or the failure changed and offers
// a new tick to every attachment; a change of the node's interruption
// wakes every task too. tick is the newest tick its attachments
// were offered before it started.
func (f *tickFanout) run(ctx context.Context, tick clockrt.Tick) {
	defer close(f.done)
	var inst <-chan struct{}
	var failure *clockrt.ClockFailure
	var interrupted *clockrt.Interruption
	for {
		o := f.obs.Read()
		explore.Yield()
		if in, _ := f.obs.Notify(); in != inst || o.Failure != failure || o.Interrupted != interrupted {
			inst, failure, interrupted = in, o.Failure, o.Interrupted
			f.mu.Lock()
			for _, a := range f.atts {
				a.wake()
			}
			f.mu.Unlock()
		}
		if o.Tick.ID != 0 && o.Tick != tick {
			tick = o.Tick
			f.offer(o)
		}
		if f.tracked {
			f.park(true)
		}
		err := f.obs.Wait(ctx)
		if f.tracked {
			f.park(false)
		}
		if err != nil {
			return
		}
	}
}

// park records that the loop waits (or no longer waits) on what its
// observer last read.
func (f *tickFanout) park(parked bool) {
	f.mu.Lock()
	f.parked = parked
	if parked {
		f.waitInst, f.waitProg = f.obs.Notify()
	}
	f.mu.Unlock()
}

// waiting reports whether the loop waits and nothing it waits for has
// happened: it has offered every tick and woken every task for every
// change published before the call. An untracked fan-out (real time)
// never counts as waiting.
func (f *tickFanout) waiting() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parked && !closed(f.waitInst) && !closed(f.waitProg)
}

// closed reports whether c, a channel that is only ever closed, is.
func closed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// offer fills the tick slot of every attachment that holds o's clock with
// o's tick, from one reading of the node.
func (f *tickFanout) offer(o clockrt.Observation) {
	snap, err := f.obs.Reading(o.Tick.Generation)
	if errors.Is(err, clockrt.ErrClockUnavailable) {
		// A replaced installation wakes every task, which reads anew.
		return
	}
	rec := newTickRecord(o.Tick, snap, err)
	explore.Yield()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.atts {
		a.offerTick(o, rec, err)
		if i%offerBatch == offerBatch-1 {
			goruntime.Gosched()
		}
	}
}

// offerBatch is how many attachments the fan-out offers a tick to before it
// yields its processor (offer). Filling a slot wakes the session's reader,
// which the scheduler queues on the fan-out's processor; yielding after a
// batch lets those readers run there at once, while the lanes, slots and
// goroutines the fan-out just touched are still in its cache, and keeps the
// processor's local run queue (256 goroutines) from spilling into the
// global one, which takes the scheduler's lock. Without it a tick to 10,000
// attachments queues 10,000 readers that run long after their state left the
// cache: per frame it cost about 30% more. The fan-out keeps its list
// locked while it yields, so the walk sees every attachment once; a join
// or leave waits for the walk, as it does without the yield.
const offerBatch = 128

// tickRecord is what a tick frame holds beyond its attachment: the tick, the
// node's reading, and the decimal length of their numbers (tickDigits),
// which is what the frame's size adds to the attachment's fixed part. It is
// the same for every attachment the tick reaches, so the fan-out makes one
// per tick and every slot it fills points to it; it never changes.
type tickRecord struct {
	tick    wire.Tick
	reading int64
	digits  int
}

// newTickRecord returns the record of tick with the reading snap, or nil
// when the reading failed (err).
func newTickRecord(tick wire.Tick, snap clockrt.Snapshot, err error) *tickRecord {
	if err != nil {
		return nil
	}
	return &tickRecord{tick: tick, reading: snap.Time, digits: tickDigits(tick, snap.Time)}
}

// offerTick puts o's tick in the attachment's slot when the client holds
// o's clock as paced, the tick is newer than the last one offered and no
// error frame of its generation was queued. rec is the tick's record; a
// reading that failed (err, and no record) leaves the tick unsent. It
// reports false when the task is busy and the tick was left to it.
func (a *attachment) offerTick(o clockrt.Observation, rec *tickRecord, err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.busy {
		return false
	}
	if o.Tick.ID == 0 || o.Clock != a.last || o.Tick.Generation != a.last.Generation ||
		o.Tick.ID <= a.lastTick || a.failed == o.Tick.Generation || a.interrupted || o.Interrupted != nil {
		return true
	}
	a.lastTick = o.Tick.ID
	if err != nil {
		a.sess.logger.Warn("cannot take the logical reading for a tick frame; tick skipped",
			"domain", a.domain, "generation", o.Tick.Generation, "tick", o.Tick.ID, "error", err)
		return true
	}
	if rec.digits > int(a.tickRoom) {
		a.sess.tooLarge(a, wire.FrameTick, int(a.tickBase)+rec.digits)
		return true
	}
	a.lane.putTick(a, rec)
	return true
}
