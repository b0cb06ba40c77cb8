package session

import (
	"context"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

func stateFrame(att *attachment, gen uint64) wire.Frame {
	return wire.Frame{Domain: att.domain, Attachment: att.id, Kind: wire.FrameState, Clock: clock.Observed{Generation: gen, State: clock.Stopped}}
}

// putTick puts tick id of generation 1 in the attachment's slot.
func putTick(l *lane, att *attachment, id uint64) {
	l.putTick(att, newTickRecord(clockrt.Tick{Generation: 1, ID: id}, clockrt.Snapshot{}, nil))
}

func TestLaneFullKeepsReplacingTicks(t *testing.T) {
	l := newLane(2)
	a := &attachment{id: 1, domain: "a"}
	b := &attachment{id: 2, domain: "b"}
	ctx := context.Background()
	putTick(l, a, 1)
	require.NoError(t, l.pushFrame(ctx, b, stateFrame(b, 1)))
	require.NoError(t, l.pushFrame(ctx, b, stateFrame(b, 2)))

	// The lane is full of frames: a third waits for room (a pushFrame with
	// room queues even on an ended context).
	ended, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, l.pushFrame(ended, b, stateFrame(b, 3)), context.Canceled)

	// Ticks still replace the slot's contents, in place, without growing.
	for id := uint64(2); id <= 1000; id++ {
		putTick(l, a, id)
	}
	require.Equal(t, 3, l.len())
	f, err := l.next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1000), f.Tick.ID, "the slot keeps its place and holds the newest tick")

	// Room frees a waiting writer.
	pushed := make(chan error, 1)
	go func() { pushed <- l.pushFrame(ctx, b, stateFrame(b, 3)) }()
	f, err = l.next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), f.Clock.Generation)
	require.NoError(t, <-pushed)

	// A taken slot queues anew at the end; withdraw and purge remove.
	putTick(l, a, 1001)
	require.Equal(t, 3, l.len())
	l.withdrawTick(a)
	require.Equal(t, 2, l.len())
	putTick(l, a, 1002)
	l.purge(b)
	require.Equal(t, 1, l.len())
	f, err = l.next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1002), f.Tick.ID)

	// Close wakes readers and writers.
	putTick(l, a, 1003)
	l.close()
	_, err = l.next(ctx)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, l.pushFrame(ctx, b, stateFrame(b, 4)), ErrClosed)
	require.Nil(t, a.slot)
}

// TestLaneReusesItsQueue holds the lane to no allocation per frame once
// warm: a tick slot queued and taken, and a state frame pushed and taken,
// reuse the queue's array and the wake-ups. (The tick's record is made by
// its fan-out, once for every attachment it reaches.)
func TestLaneReusesItsQueue(t *testing.T) {
	l := newLane(4)
	a := &attachment{id: 1, domain: "a"}
	ctx := context.Background()
	rec := newTickRecord(clockrt.Tick{Generation: 1, ID: 1}, clockrt.Snapshot{}, nil)
	cycle := func() {
		l.putTick(a, rec)
		require.NoError(t, l.pushFrame(ctx, a, stateFrame(a, 1)))
		for range 2 {
			_, err := l.next(ctx)
			require.NoError(t, err)
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
}

// TestLaneWakesEveryWaiter runs many readers and many writers blocked on a
// full lane at once: each wake passes on while work is left, so every frame
// is read and every writer returns.
func TestLaneWakesEveryWaiter(t *testing.T) {
	const writers, perWriter, readers = 8, 50, 4
	l := newLane(2)
	ctx := ctxT(t)
	atts := make([]*attachment, writers)
	pushed := make(chan error, writers)
	for i := range atts {
		atts[i] = &attachment{id: uint64(i + 1), domain: "d"}
		go func(a *attachment) {
			for g := uint64(1); g <= perWriter; g++ {
				if err := l.pushFrame(ctx, a, stateFrame(a, g)); err != nil {
					pushed <- err
					return
				}
			}
			pushed <- nil
		}(atts[i])
	}
	read := make(chan wire.Frame, writers*perWriter)
	readDone := make(chan error, readers)
	for range readers {
		go func() {
			for {
				f, err := l.next(ctx)
				if err != nil {
					readDone <- err
					return
				}
				read <- f
			}
		}()
	}
	// Readers hand frames on concurrently, so only the count per writer
	// is checked here; the lane's order is TestLaneFullKeepsReplacingTicks'.
	count := map[uint64]int{}
	for i := range writers * perWriter {
		select {
		case f := <-read:
			count[f.Attachment]++
		case <-ctx.Done():
			t.Fatalf("a waiter was never woken: %d frames read", i)
		}
	}
	for _, a := range atts {
		require.Equal(t, perWriter, count[a.id])
	}
	for range writers {
		require.NoError(t, <-pushed)
	}
	l.close()
	for range readers {
		require.ErrorIs(t, <-readDone, ErrClosed)
	}
}

// waiting waits until the lane has readers readers waiting, alone of them
// on its watch.
func waiting(t *testing.T, ctx context.Context, l *lane, readers, alone int) {
	t.Helper()
	for {
		l.mu.Lock()
		r, w := l.readyWaiters, l.watchWaiters
		l.mu.Unlock()
		if int(r) == readers && int(w) == alone {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d readers waiting, %d of them on the watch; want %d and %d", r, w, readers, alone)
		default:
			goruntime.Gosched()
		}
	}
}

// TestLaneWatchWakesItsReaders holds the readers that wait on the lane's
// watch alone to the contract of a select on their context: the watch's end
// releases every one of them, a reader of another context waits on, the
// lane takes a new watch once none of the old one's readers waits, and
// close releases the rest.
func TestLaneWatchWakesItsReaders(t *testing.T) {
	ctx := ctxT(t)
	l := newLane(4)
	a := &attachment{id: 1, domain: "a"}
	watched, end := context.WithCancel(ctx)
	defer end()
	other, endOther := context.WithCancel(ctx)
	defer endOther()
	type result struct {
		f   wire.Frame
		err error
	}
	read := func(c context.Context) <-chan result {
		out := make(chan result, 1)
		go func() {
			f, err := l.next(c)
			out <- result{f, err}
		}()
		return out
	}
	take := func(out <-chan result) result {
		t.Helper()
		select {
		case r := <-out:
			return r
		case <-ctx.Done():
			t.Fatal("a reader was never woken")
			return result{}
		}
	}

	// The first wait on a context selects; the second makes it the watch.
	first := read(watched)
	waiting(t, ctx, l, 1, 0)
	putTick(l, a, 1)
	require.Equal(t, uint64(1), take(first).f.Tick.ID)
	outs := []<-chan result{read(watched)}
	waiting(t, ctx, l, 1, 1)
	for range 2 {
		outs = append(outs, read(watched))
	}
	stranger := read(other)
	waiting(t, ctx, l, 4, 3)

	end()
	for _, out := range outs {
		require.ErrorIs(t, take(out).err, context.Canceled)
	}
	waiting(t, ctx, l, 1, 0)
	putTick(l, a, 2)
	r := take(stranger)
	require.NoError(t, r.err)
	require.Equal(t, uint64(2), r.f.Tick.ID, "the watch's end left the other reader waiting")

	// No reader waits on the ended watch, so a context waited on twice
	// becomes the new one.
	next := read(other)
	waiting(t, ctx, l, 1, 1)
	l.mu.Lock()
	require.Equal(t, other.Done(), l.watchDone)
	l.mu.Unlock()
	l.close()
	require.ErrorIs(t, take(next).err, ErrClosed)
}

// TestLaneReleasesABurst holds an idle lane to what its next frames need: a
// burst of frames taken leaves the array's entries empty, no frame held but
// one empty spare box, and the next frame reuses that box.
func TestLaneReleasesABurst(t *testing.T) {
	const burst = 8
	l := newLane(burst)
	a := &attachment{id: 1, domain: "a"}
	ctx := context.Background()
	for g := range uint64(burst) {
		require.NoError(t, l.pushFrame(ctx, a, stateFrame(a, g+1)))
	}
	putTick(l, a, 1)
	for g := range uint64(burst) {
		f, err := l.next(ctx)
		require.NoError(t, err)
		require.Equal(t, g+1, f.Clock.Generation)
	}
	f, err := l.next(ctx)
	require.NoError(t, err)
	require.Equal(t, wire.FrameTick, f.Kind)

	l.mu.Lock()
	spare := l.spare
	for _, e := range l.entries[:cap(l.entries)] {
		require.Equal(t, laneEntry{}, e, "a taken entry holds nothing")
	}
	l.mu.Unlock()
	require.NotNil(t, spare)
	require.Equal(t, wire.Frame{}, *spare, "the spare box is empty")
	require.Nil(t, a.slot, "a taken slot holds no record")

	require.NoError(t, l.pushFrame(ctx, a, stateFrame(a, burst+1)))
	l.mu.Lock()
	require.Same(t, spare, l.entries[l.head].frame, "the next frame reuses the spare")
	require.Nil(t, l.spare)
	l.mu.Unlock()
}
