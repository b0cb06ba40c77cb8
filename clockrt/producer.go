package clockrt

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// ProducerFence is everything a tick producer is bound to. A node runs a
// producer only while every field agrees with its committed installation;
// any change retires the producer before a successor starts. The fence is
// immutable for the producer's life, so even a report it emits while
// exiting names the fence it was started under and cannot impersonate a
// successor.
type ProducerFence struct {
	Domain     string
	Generation uint64
	Mapping    clock.Mapping
	Period     uint64
	Authority  lifecycle.AuthorityFence
}

// FenceOf returns the producer fence of a paced installation, and false for
// any other state.
func FenceOf(in *Installation) (ProducerFence, bool) {
	if in.lc.State != StatePaced {
		return ProducerFence{}, false
	}
	return ProducerFence{
		Domain:     in.domain,
		Generation: in.lc.Generation,
		Mapping:    in.lc.Mapping,
		Period:     in.lc.Period,
		Authority:  in.lc.Authority,
	}, true
}

// ProducerConfig configures StartProducer.
type ProducerConfig struct {
	// Fence is the immutable fence the producer reports under.
	Fence ProducerFence
	// Source is the node's time source: UTC for the projection, timers for
	// the waits.
	Source timesource.Source
	// Emit receives every report, in order, on the producer's goroutine. It
	// must not block for long: the node applies the report locally
	// (Registry.AcceptProgress) and hands it to peer delivery, which keeps
	// one replaceable pending report per peer. When the producer's
	// arithmetic fails, its last report carries the Failure.
	Emit func(ProgressReport)
	// Logger receives warnings about arithmetic failures. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// MinTickInterval is the least wall-clock (monotonic) time between two
// ticks a producer emits for one domain: at most 1000 ticks a second per
// domain, whatever PERIOD and TIME RATE say. The specification accepts
// every positive PERIOD and every positive finite TIME RATE (PERIOD 1ns at
// TIME RATE 1000 is a valid domain), so a finer cadence is not refused; it
// is paced instead: a wake that finds several boundaries due emits only the
// newest, as after any late wake, and admission, which reconstructs
// positions from the mapping, does not depend on which boundaries were
// announced. Without the floor one such domain costs its authority a wake
// per nanosecond of physical time and every follower a report for each.
const MinTickInterval = time.Millisecond

// Producer is the tick producer of one paced domain on its authority node.
//
// It projects UTC through the fence's mapping, finds the latest due tick
// with direct arithmetic (clock.LatestDueTick) and emits only that one, so a
// producer that wakes several periods late never bursts through the missed
// ticks. It then targets the first future boundary (clock.NextTick), waiting
// the physical time the mapping's inverse gives (rounded up), and never less
// than one period divided by the rate, nor less than MinTickInterval, after
// an emission. All time comes
// from the configured timesource.Source.
//
// Four failures stop it: the projection (op "project", ErrClockOverflow),
// the tick boundary of the latest due tick (op "latest due tick",
// ErrTickOverflow), the cadence's next tick (op "next tick",
// ErrTickOverflow) and the rate conversion of a logical wait into physical
// nanoseconds, the wait for the next boundary or the spacing of one period
// (op "wait", ErrCannotSchedule). On any of them the producer logs the
// typed error, a *ClockError whose cause is the arithmetic error of package
// clock, as the warning "tick producer stopped producing" with the
// operation and the error as attributes; records it (Err); emits one last
// report that carries the same full typed report (ProgressReport.Failure,
// with the newest tick it emitted) so every node's attached sessions learn
// of it; and stops producing: its goroutine ends and Done is closed.
//
// A wait that fits unsigned 64-bit nanoseconds but not a time.Duration
// (longer than about 292 years) is not a failure: it saturates, is armed
// for the largest time.Duration and is evaluated again when it fires.
type Producer struct {
	cfg     ProducerConfig
	logger  *slog.Logger
	cancel  context.CancelFunc
	done    chan struct{}
	stop    sync.Once
	emitted atomic.Uint64
	last    atomic.Uint64
	err     atomic.Pointer[error]
	// parked is set while the goroutine waits on its armed timer, having
	// emitted everything due at the time it read (Parked).
	parked atomic.Bool
}

// StartProducer starts a producer for cfg.Fence. The caller owns it and must
// call Stop.
func StartProducer(cfg ProducerConfig) *Producer {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Producer{
		cfg:    cfg,
		logger: logger.With("domain", cfg.Fence.Domain, "generation", cfg.Fence.Generation, "authority", cfg.Fence.Authority.String()),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go p.run(ctx)
	return p
}

// Fence returns the producer's immutable fence.
func (p *Producer) Fence() ProducerFence { return p.cfg.Fence }

// Stop cancels the producer and waits until its goroutine has returned: no
// report is emitted after Stop returns. It is idempotent.
func (p *Producer) Stop() {
	p.stop.Do(p.cancel)
	<-p.done
}

// Done returns a channel closed when the producer's goroutine has returned.
func (p *Producer) Done() <-chan struct{} { return p.done }

// Emitted returns how many reports the producer has emitted.
func (p *Producer) Emitted() uint64 { return p.emitted.Load() }

// LastTick returns the id of the newest emitted tick, 0 before the first.
func (p *Producer) LastTick() uint64 { return p.last.Load() }

// Parked reports whether the producer waits on its armed timer, having
// emitted every tick due when it last read the time, or has ended (Stop,
// or a failure it reported): either way it has nothing to do until its
// timer fires. A producer that has not yet armed its first timer,
// or that a firing woke, is not parked. A driver of virtual time reads it
// to know that the producer is done with the instant it was woken at.
func (p *Producer) Parked() bool { return p.parked.Load() }

// Err returns the arithmetic failure that stopped production, or nil.
func (p *Producer) Err() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (p *Producer) run(ctx context.Context) {
	defer close(p.done)
	defer p.parked.Store(true) // ended: nothing more to do, ever
	f := p.cfg.Fence
	src := p.cfg.Source
	origin := f.Mapping.LogicalStart
	// spacing is the least physical time between two emissions: one
	// period divided by the rate, rounded up, and at least
	// MinTickInterval. It is needed only after an emission, so a spacing
	// that cannot be converted fails the producer after its first tick.
	spacing, spacingErr := tickSpacing(f.Mapping, f.Period)
	var (
		timer    timesource.Timer
		last     uint64
		lastMono time.Duration
		emitted  bool
		lastRep  ProgressReport // the newest emitted report
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := src.Now()
		logical, err := f.Mapping.Project(now)
		if err != nil {
			p.fail("project", ErrClockOverflow, err, lastRep)
			return
		}
		id, boundary, err := clock.LatestDueTick(origin, f.Period, logical)
		if err != nil {
			p.fail("latest due tick", ErrTickOverflow, err, lastRep)
			return
		}
		// wait is the physical time to sleep before evaluating again.
		var wait uint64
		if id > last && emitted {
			if since := src.Monotonic() - lastMono; uint64(since) < spacing {
				wait = spacing - uint64(since)
			}
		}
		if id > last && wait == 0 {
			lastRep = ProgressReport{
				Domain: f.Domain, Generation: f.Generation, Authority: f.Authority,
				ID: id, Boundary: boundary, AuthorityUTC: now, Period: f.Period,
			}
			p.emit(lastRep)
			last, lastMono, emitted = id, src.Monotonic(), true
		}
		if wait == 0 {
			_, next, err := clock.NextTick(origin, f.Period, logical)
			if err != nil {
				p.fail("next tick", ErrTickOverflow, err, lastRep)
				return
			}
			if wait, err = f.Mapping.Wait(logical, next); err != nil {
				p.fail("wait", ErrCannotSchedule, err, lastRep)
				return
			}
			if emitted {
				if spacingErr != nil {
					p.fail("wait", ErrCannotSchedule, spacingErr, lastRep)
					return
				}
				since := uint64(src.Monotonic() - lastMono)
				if since < spacing && spacing-since > wait {
					wait = spacing - since
				}
			}
		}
		d := time.Duration(math.MaxInt64)
		if wait < uint64(math.MaxInt64) {
			d = time.Duration(wait)
		}
		if timer == nil {
			timer = src.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		p.parked.Store(true)
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
		p.parked.Store(false)
	}
}

// tickSpacing is the least physical time between two emissions of a
// producer for mapping and period: one period divided by the rate, rounded
// up (clock.Mapping.WaitDelta), raised to MinTickInterval.
func tickSpacing(m clock.Mapping, period uint64) (uint64, error) {
	d, err := m.WaitDelta(period)
	if err != nil {
		return 0, err
	}
	return max(d, uint64(MinTickInterval)), nil
}

func (p *Producer) emit(rep ProgressReport) {
	if p.cfg.Emit != nil {
		p.cfg.Emit(rep)
	}
	p.emitted.Add(1)
	p.last.Store(rep.ID)
}

// fail records the failure of op, a *ClockError wrapping sentinel with the
// arithmetic error err as its cause, logs it and emits the last report:
// last (the newest emitted report, zero before the first) with the
// failure's typed report. The producer's goroutine then ends, and Done is
// closed, though the producer stays bound to its fence until Stop.
func (p *Producer) fail(op string, sentinel, err error, last ProgressReport) {
	f := p.cfg.Fence
	cerr := &ClockError{Op: "produce", Domain: f.Domain, Generation: f.Generation, Err: sentinel, Cause: err}
	stored := error(cerr)
	p.err.Store(&stored)
	p.logger.Warn("tick producer stopped producing", "op", op, "err", cerr)
	if last.ID == 0 {
		last = ProgressReport{Domain: f.Domain, Generation: f.Generation, Authority: f.Authority, Period: f.Period}
	}
	last.Failure = &ClockFailure{Domain: f.Domain, Generation: f.Generation, Op: op,
		Code: wire.CodeOf(cerr), Cause: err.Error(), Message: cerr.Error()}
	if p.cfg.Emit != nil {
		p.cfg.Emit(last)
	}
}
