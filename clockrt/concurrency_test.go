package clockrt

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

// generationStart gives each generation a logical start far below its
// predecessor's, so that a later generation clamped by an earlier one's
// watermark would read outside its own band.
func generationStart(gen uint64) int64 { return -int64(gen) * 1_000_000_000_000_000 }

const generationBand = 1_000_000_000_000 // far more logical time than a run reaches

// TestConcurrentReadsRacingReplacements runs readers against a writer that
// moves the authority, steps UTC backwards and forwards and starts new
// generations. Within a generation no reader's reads decrease, and every
// read stays inside its own generation's band, so no read of an earlier
// generation ever clamped a later one.
func TestConcurrentReadsRacingReplacements(t *testing.T) {
	const (
		readers     = 4
		generations = 5
		steps       = 300
	)
	f := timesource.NewFake(base)
	r := NewRegistry(f)
	lcFor := func(gen, rev uint64, fence int) Lifecycle {
		lc := paced(gen, 1, rev)
		lc.Mapping.WallStartedAt = base
		lc.Mapping.LogicalStart = generationStart(gen)
		if fence%2 == 1 {
			lc.Authority = fenceB
		}
		return lc
	}
	install(t, r, "d", lcFor(1, 0, 0))

	stop := make(chan struct{})
	errs := make(chan error, readers)
	var reads, alive atomic.Int64
	alive.Store(readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			defer alive.Add(-1)
			errs <- readUntil(r, stop, i, &reads)
		})
	}
	// progress yields until the readers have made more reads, so that every
	// step of the writer races reads rather than finishing before they run.
	// A reader that failed has returned; the writer then stops waiting.
	progress := func(n int64) {
		want := reads.Load() + n
		for reads.Load() < want && alive.Load() == readers {
			goruntime.Gosched()
		}
	}
	progress(readers)

	rev := uint64(0)
	for gen := uint64(1); gen <= generations; gen++ {
		for i := range steps {
			rev++
			switch i % 3 {
			case 0:
				f.Advance(1000)
			case 1:
				f.Set(f.Now() - 700) // a host clock step backwards
			case 2:
				install(t, r, "d", lcFor(gen, rev, i)) // authority move, same generation
			}
			progress(2)
		}
		install(t, r, "d", lcFor(gen+1, rev, 0))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// readUntil reads the domain clock until stop closes, rebinding when its
// generation is replaced, and reports the first violation.
func readUntil(r *Registry, stop <-chan struct{}, reader int, total *atomic.Int64) error {
	h, err := r.Bind("d")
	if err != nil {
		return err
	}
	last := map[uint64]int64{}
	reads := 0
	for {
		select {
		case <-stop:
			if reads == 0 {
				return fmt.Errorf("reader %d made no read", reader)
			}
			return nil
		default:
		}
		snap, err := h.Snapshot()
		if errors.Is(err, ErrStaleGeneration) {
			if h, err = r.Bind("d"); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		reads++
		total.Add(1)
		if snap.Generation != h.Generation() {
			return fmt.Errorf("reader %d: snapshot generation %d from a handle of %d", reader, snap.Generation, h.Generation())
		}
		lo := generationStart(snap.Generation)
		if snap.Time < lo || snap.Time > lo+generationBand {
			return fmt.Errorf("reader %d: generation %d read %d outside its band from %d", reader, snap.Generation, snap.Time, lo)
		}
		if prev, ok := last[snap.Generation]; ok && snap.Time < prev {
			return fmt.Errorf("reader %d: generation %d went backwards from %d to %d", reader, snap.Generation, prev, snap.Time)
		}
		last[snap.Generation] = snap.Time
		// Yield so that the writer, which waits for reads between its
		// steps, is not starved when the readers outnumber the processors:
		// with GOMAXPROCS=1 four spinning readers held each of its steps
		// for whole preemption slices, and the test ran for minutes.
		goruntime.Gosched()
	}
}

// TestManyWaitersWakeOnStop: every waiter of a generation wakes with a
// typed stopped error when STOP is installed, and no timer is left armed.
func TestManyWaitersWakeOnStop(t *testing.T) {
	const waiters = 8
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 60, 0))
	ctx := testContext(t)
	results := make([]<-chan waitResult, waiters)
	for i := range waiters {
		h, err := r.Bind("d")
		require.NoError(t, err)
		results[i] = startWait(ctx, h, h.Deadline(base+int64(i+1)*int64(time.Hour)))
	}
	require.NoError(t, f.BlockUntil(ctx, waiters))
	install(t, r, "d", stopped(1, 0))
	for _, c := range results {
		res := <-c
		requireClockErr(t, res.err, ErrDomainStopped, "d")
		require.ErrorIs(t, res.err, ErrClockUnavailable)
	}
	require.Zero(t, f.Armed())
	require.Zero(t, f.Fired())
}

// TestWaitersRaceGenerationChange: waiters that race a new generation either
// reach their deadline or report the stale generation; none hangs or
// reports anything else.
func TestWaitersRaceGenerationChange(t *testing.T) {
	const waiters = 6
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 0))
	ctx := testContext(t)
	h, err := r.Bind("d")
	require.NoError(t, err)
	now, err := h.Now()
	require.NoError(t, err)
	results := make([]<-chan waitResult, waiters)
	for i := range waiters {
		results[i] = startWait(ctx, h, h.Deadline(now+int64(i)*10))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 5 {
			f.Advance(10)
		}
	})
	var installErr error
	wg.Go(func() { _, installErr = r.Install("d", paced(2, 1, 0)) })
	wg.Wait()
	require.NoError(t, installErr)
	for _, c := range results {
		res := <-c
		if res.err != nil {
			requireClockErr(t, res.err, ErrStaleGeneration, "d")
			continue
		}
		require.Equal(t, uint64(1), res.snap.Generation)
	}
	require.Zero(t, f.Armed())
}

func TestWatchObservesEveryPublication(t *testing.T) {
	r, _ := newFakeRegistry(t)
	install(t, r, "d", unpaced(1, 0))
	a, ok := r.Lookup("d")
	require.True(t, ok)
	ctx := testContext(t)

	// An observer that subscribes before each read sees every publication
	// in order, and the last one it sees is the newest.
	seen := make(chan []uint64, 1)
	ready := make(chan struct{})
	go func() {
		var gens []uint64
		in, changed := a.Watch()
		close(ready)
		for in.State() != StateMissing {
			select {
			case <-changed:
			case <-ctx.Done():
				seen <- gens
				return
			}
			in, changed = a.Watch()
			gens = append(gens, in.Generation())
		}
		seen <- gens
	}()
	<-ready
	for gen := uint64(2); gen <= 6; gen++ {
		install(t, r, "d", unpaced(gen, 0))
		install(t, r, "d", unpaced(gen, 0)) // unchanged: publishes nothing
	}
	r.Remove("d")
	gens := <-seen
	require.NotEmpty(t, gens)
	require.Equal(t, uint64(0), gens[len(gens)-1], "the observer ends on the missing publication")
	for i := 1; i < len(gens)-1; i++ {
		require.Greater(t, gens[i], gens[i-1], "publications are observed in order")
	}
}

func TestContextCancelBeforeFirstWait(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.WaitUntil(ctx, h.Deadline(base+1))
	require.ErrorIs(t, err, ErrWaitCancelled)
	require.Zero(t, f.Armed())
}
