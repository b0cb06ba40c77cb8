package clockrt

import (
	"context"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/internal/explore"
)

// Observed maps the installation to the public observed clock, and reports
// false for a missing one. The observed clock carries no authority identity
// or revision, so installations that differ only in their authority observe
// as equal values.
func (in *Installation) Observed() (clock.Observed, bool) {
	lc := in.lc
	switch lc.State {
	case StateStopped:
		return clock.Observed{Generation: lc.Generation, State: clock.Stopped}, true
	case StateUninstalled:
		return clock.Observed{Generation: lc.Generation, State: clock.Uninstalled}, true
	case StateUnpaced:
		return clock.Observed{Generation: lc.Generation, State: clock.Unpaced}, true
	case StatePaced:
		return clock.Observed{
			Generation:    lc.Generation,
			State:         clock.Paced,
			Period:        lc.Period,
			Skew:          lc.Skew,
			LogicalStart:  lc.Mapping.LogicalStart,
			WallStartedAt: lc.Mapping.WallStartedAt,
			Rate:          lc.Mapping.Rate,
		}, true
	default:
		return clock.Observed{}, false
	}
}

// Observation is one read of an Observer: the observed clock and, while that
// clock is paced, the newest accepted tick of its generation.
type Observation struct {
	// Missing is set when the domain is not installed: it was removed, or
	// the observer was created for a domain this node lacks.
	Missing bool
	// Clock is the observed clock; zero when Missing.
	Clock clock.Observed
	// Tick is the newest accepted tick of Clock's generation; its ID is 0
	// when there is none or Clock is not paced.
	Tick Tick
	// Failure is the failure the authority reported for Clock's
	// generation, nil when none was accepted. It holds until the next
	// generation (or a STOP) clears it.
	Failure *ClockFailure
	// Interrupted is the node's interruption (Registry.SetInterrupted),
	// nil while the node vouches for its clocks.
	Interrupted *Interruption
}

// Observer follows one domain's lifecycle publication and progress watch
// for an attachment. Each Read subscribes to both notifications before it
// reads, so an installation or tick published after a Read always ends the
// next Wait. The observer retains the domain's allocation, and with it the
// progress watch, for as long as it lives: removing the domain publishes
// missing first, and only that publication wakes it.
//
// An Observer is used by one goroutine at a time (an attachment's delivery
// task).
type Observer struct {
	alloc  *Allocation
	instC  <-chan struct{}
	progC  <-chan struct{}
	handle *Handle // cached for Reading, bound to one generation
}

// Observe returns an observer of the domain. It fails with ErrDomainMissing
// when the domain is not installed on this node.
func (r *Registry) Observe(domain string) (*Observer, error) {
	a, ok := r.Lookup(domain)
	if !ok {
		return nil, &ClockError{Op: "observe", Domain: domain, Err: ErrDomainMissing}
	}
	return &Observer{alloc: a}, nil
}

// Fork returns a new observer of the same allocation, for another
// goroutine; it has not read yet.
func (o *Observer) Fork() *Observer { return &Observer{alloc: o.alloc} }

// Allocation returns the observed allocation: one for every observer of a
// domain as installed, another once the domain is removed and created
// again.
func (o *Observer) Allocation() *Allocation { return o.alloc }

// Domain returns the observed domain's name.
func (o *Observer) Domain() string { return o.alloc.domain }

// Read subscribes to the installation and the progress watch and then reads
// both: the current observed clock, the newest accepted tick when the
// installation is paced and of that tick's generation, and the accepted
// failure of the observed generation.
func (o *Observer) Read() Observation {
	in, instC := o.alloc.Watch()
	explore.Yield()
	tick, failure, progC := o.alloc.progress.subscribe()
	o.instC, o.progC = instC, progC
	c, ok := in.Observed()
	if !ok {
		return Observation{Missing: true}
	}
	obs := Observation{Clock: c}
	if o.alloc.interrupted != nil {
		obs.Interrupted = o.alloc.interrupted.cur.Load()
	}
	if c.State == clock.Paced && tick.ID != 0 && tick.Generation == c.Generation {
		obs.Tick = tick
	}
	if failure != nil && failure.Generation == c.Generation {
		obs.Failure = failure
	}
	return obs
}

// Notify returns the channels the last Read subscribed to: the first is
// closed when the installation it read is replaced, the second when the
// progress watch changes. Before the first Read both are nil.
func (o *Observer) Notify() (installation, progress <-chan struct{}) {
	return o.instC, o.progC
}

// Wait blocks until the installation or the progress watch changed since the
// last Read (at once if that already happened, or if Read was never called),
// or until ctx ends, returning ctx's error.
func (o *Observer) Wait(ctx context.Context) error {
	if o.instC == nil {
		return ctx.Err()
	}
	select {
	case <-o.instC:
		return nil
	case <-o.progC:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reading takes the serving node's own logical reading of generation: one
// execution snapshot through the same watermarked read execution uses, so it
// never lies behind a reading this node already returned for the generation.
// It fails like Handle.Snapshot, with ErrStaleGeneration once another
// generation is installed.
func (o *Observer) Reading(generation uint64) (Snapshot, error) {
	if o.handle == nil || o.handle.generation != generation {
		o.handle = &Handle{alloc: o.alloc, src: o.alloc.src, generation: generation}
	}
	return o.handle.Snapshot()
}
