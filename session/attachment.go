package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/internal/explore"
	"github.com/nspl-dev/nspl/wire"
)

// attachment is one followed domain clock: its observer, its delivery task
// and its tick slot.
//
// The delivery task runs only while there is a change to deliver: its
// fan-out starts it (wake) when the installation or the failure changes,
// and it ends once it has caught up, so an idle attachment holds no
// goroutine. An idle attachment holds no more than this record and its
// observer: the task's context is made as the task starts and released as
// it ends, and what only the task's rare paths need (unfit) is allocated
// when they are taken. Sessions and fan-outs list their attachments in
// slices, not maps: a session holds few, and a fan-out walks all of them on
// every tick.
type attachment struct {
	// mu guards what the task and the fan-out share: the observation the
	// client last received (written by the task only), the newest tick id
	// of its generation offered, the generation whose error frame was
	// queued, and busy, set while the task changes what the client holds;
	// and the task's own state: running, woken again while running
	// (dirty), halted for good (stopped or ended), and the running task's
	// cancel, nil once it caught up.
	//
	// What a tick touches comes first, 128 bytes on two cache lines: the
	// fan-out reads what it checks, on the first, and the slot, lane and
	// room; the reader only the slot, id and domain, on the second.
	// Neither reads anything of the session.
	mu      sync.Mutex
	busy    bool
	running bool
	dirty   bool
	// interrupted is set while the client holds an interrupted frame the
	// node has not resumed from (a state frame of the same clock).
	interrupted bool
	tickRoom    int32
	lastTick    uint64
	failed      uint64
	last        clock.Observed

	// slot is the replaceable tick slot, guarded by the lane's mutex: the
	// record of the tick frame it holds while it is queued on the
	// session's lane, nil while it is not. The reader builds the tick
	// frame from it, the attachment's id and its domain.
	slot   *tickRecord
	lane   *lane
	id     uint64
	domain string

	// tickBase is the encoded size of the attachment's tick frames less
	// their numbers (frameSize), and tickRoom what the session's frame
	// limit leaves of a tick frame for those numbers, which tick records
	// count (tickRecord.digits).
	tickBase int32
	halted   bool

	obs *clockrt.Observer // used by the attach, then by the running task only

	// sess is the session that holds it; fanout delivers its ticks and
	// wakes its task, and at is its index in the fan-out's list, guarded
	// by the fan-out's mutex.
	sess   *Session
	fanout *tickFanout
	at     int32

	// ending is set by the delivery task before it queues the end frame,
	// so a request sent after the client read that frame finds it set.
	ending atomic.Bool
	leave  sync.Once

	cancel context.CancelFunc // guarded by mu
	task   sync.WaitGroup     // the running task

	// unfit is a state that did not fit the frame limit, kept by the task
	// from one run to the next; nil otherwise.
	unfit *clock.Observed

	// The padding puts the record in the 256-byte size class, whose
	// objects start on a cache line, so what a tick touches spans two
	// lines, not three.
	_ [32]byte
}

// stop cancels the delivery task, waits for it to end, keeps it from
// starting again and leaves the fan-out.
func (a *attachment) stop() {
	a.mu.Lock()
	a.halted = true
	cancel := a.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	// Nothing starts the task once halted is set, so no Add follows.
	a.task.Wait()
	a.leave.Do(func() { leaveFanout(a) })
}

// wake starts the delivery task, or has the running one read again before
// it ends.
func (a *attachment) wake() {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.halted:
	case a.running:
		a.dirty = true
	default:
		a.running = true
		ctx, cancel := context.WithCancel(a.sess.ctx)
		a.cancel = cancel
		a.task.Add(1)
		go func() {
			defer a.task.Done()
			defer cancel()
			a.sess.deliver(ctx, a)
		}()
	}
}

// caughtUpLocked records that the running task ends: it no longer runs, and
// its context, cancelled by the task as it returns, is no longer kept.
func (a *attachment) caughtUpLocked() {
	a.running = false
	a.cancel = nil
}

// installations is the node's installation counter as an attach sees it
// (Engine's Installed and WaitInstalled).
type installations interface {
	Installed() (count, revision uint64, changed <-chan struct{})
	WaitInstalled(ctx context.Context) error
}

// waitInstalled waits until the node has installed the committed domains
// since it started, or until the session ends. The wait belongs to the
// session, not the request: when ctx ends first, the request returns ctx's
// error and hands its place on the request lane to a goroutine that keeps
// waiting and then releases it (handedOff).
func (s *Session) waitInstalled(ctx context.Context) (handedOff bool, err error) {
	if count, _, _ := s.installs.Installed(); count > 0 {
		return false, nil
	}
	done := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false, ErrClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		done <- s.installs.WaitInstalled(s.ctx)
	}()
	select {
	case err := <-done:
		if err != nil && s.ctx.Err() != nil {
			err = ErrClosed
		}
		return false, err
	case <-ctx.Done():
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return false, ctx.Err()
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			<-done
			s.turn <- struct{}{}
		}()
		return true, ctx.Err()
	}
}

func (s *Session) attach(ctx context.Context, c *call) (wire.Result, bool, error) {
	if err := s.refuseInTransaction("ATTACH DOMAIN CLOCK"); err != nil {
		return wire.Result{}, false, err
	}
	domain, err := s.activeDomain()
	if err != nil {
		return wire.Result{}, false, err
	}
	if handedOff, err := s.waitInstalled(ctx); err != nil {
		return wire.Result{}, handedOff, err
	}
	s.mu.Lock()
	old := s.attachmentLocked(domain)
	s.mu.Unlock()
	if old != nil {
		if !old.ending.Load() {
			return wire.Result{}, false, &AttachmentError{Err: ErrAlreadyAttached, Domain: domain}
		}
		// The attachment ended (its end frame is queued or read): release
		// it and serve this attach as a new attachment.
		s.release(old)
	}
	obs, err := s.node.Observe(domain)
	if err != nil {
		if errors.Is(err, clockrt.ErrDomainMissing) {
			return wire.Result{}, false, errDomainNotFound(domain)
		}
		return wire.Result{}, false, err
	}
	first := obs.Read()
	if first.Missing {
		return wire.Result{}, false, errDomainNotFound(domain)
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	reply := wire.Frame{Domain: domain, Attachment: id, Kind: wire.FrameState, Clock: first.Clock}
	if n := len(reply.AppendJSON(nil)); n > s.frameLimit {
		s.logger.Warn("attach reply exceeds the frame limit; nothing attached",
			"domain", domain, "size", n, "limit", s.frameLimit)
		return wire.Result{}, false, fmt.Errorf("%w: the attach reply for domain '%s' is %d bytes and the limit is %d; raise the frame limit",
			ErrFrameTooLarge, domain, n, s.frameLimit)
	}
	if err := ctx.Err(); err != nil {
		// The reply is not returned, so it announces nothing.
		return wire.Result{}, false, err
	}
	base := tickFrameBase(domain, id)
	a := &attachment{
		id: id, domain: domain, obs: obs, sess: s, lane: &s.lane, last: first.Clock,
		tickBase: int32(base), tickRoom: int32(max(min(s.frameLimit-base, math.MaxInt32), -1)),
	}
	// The reply takes its place in the stream before any frame of the
	// attachment can, and delivery starts behind it with the accepted tick
	// of the reply's generation.
	planted := explore.Planted(explore.FrameBeforeReply)
	if planted {
		// A test build's planted bug: the delivery starts first, so its
		// frames may take their place before the reply.
		a.offerAccepted(first)
		joinFanout(a, first.Tick)
		a.wake()
		explore.Yield()
	}
	if err := s.placeReply(c, a); err != nil {
		return wire.Result{}, false, err
	}
	explore.Yield()
	if !planted {
		a.offerAccepted(first)
		// Joined before the task's first read, so a tick published after
		// that read reaches it through the fan-out, and before the session
		// holds it, so a Close that finds it leaves the fan-out with it.
		joinFanout(a, first.Tick)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		a.stop()
		return wire.Result{}, false, ErrClosed
	}
	s.attachments = append(s.attachments, a)
	s.mu.Unlock()
	a.wake()
	observed := first.Clock
	return wire.Result{
		Domain:     domain,
		Message:    fmt.Sprintf("attached to the clock of domain '%s': %s", domain, wire.FormatObserved(observed)),
		Clock:      &observed,
		Attachment: id,
	}, false, nil
}

func (s *Session) detach(c *call) (wire.Result, error) {
	if err := s.refuseInTransaction("DETACH DOMAIN CLOCK"); err != nil {
		return wire.Result{}, err
	}
	domain, err := s.activeDomain()
	if err != nil {
		return wire.Result{}, err
	}
	s.mu.Lock()
	a := s.attachmentLocked(domain)
	s.mu.Unlock()
	if a == nil {
		return wire.Result{}, &AttachmentError{Err: ErrNotAttached, Domain: domain}
	}
	ended := a.ending.Load()
	s.release(a)
	c.released = domain
	if ended {
		return wire.Result{}, &AttachmentError{Err: ErrNotAttached, Domain: domain}
	}
	return wire.Result{Domain: domain, Message: fmt.Sprintf("detached from the clock of domain '%s'", domain)}, nil
}

// release stops the attachment's delivery task, waits for it, forgets the
// attachment and withdraws its unread frames, so no frame of it follows the
// reply of the request that released it.
func (s *Session) release(a *attachment) {
	a.stop()
	s.mu.Lock()
	if i := slices.Index(s.attachments, a); i >= 0 {
		s.attachments = slices.Delete(s.attachments, i, i+1)
	}
	s.mu.Unlock()
	s.lane.purge(a)
}

// attachmentLocked returns the session's attachment of domain, or nil.
func (s *Session) attachmentLocked(domain string) *attachment {
	for _, a := range s.attachments {
		if a.domain == domain {
			return a
		}
	}
	return nil
}

// fits reports whether f's encoding fits the frame limit, logging a warning
// when it does not.
func (s *Session) fits(a *attachment, f wire.Frame) bool {
	n := a.frameSize(f)
	if n <= s.frameLimit {
		return true
	}
	s.tooLarge(a, f.Kind, n)
	return false
}

// tooLarge logs the warning for a frame of size n skipped for the frame
// limit.
func (s *Session) tooLarge(a *attachment, kind wire.FrameKind, n int) {
	s.logger.Warn("frame exceeds the frame limit; skipped",
		"domain", a.domain, "kind", kind.String(), "size", n, "limit", s.frameLimit)
}

// deliver is an attachment's delivery task. It starts from the observation
// the attach reply carried and, on every wake, reads the newest installation
// and progress: a changed observation is queued as a state frame (after
// withdrawing an untaken tick), a newer accepted tick of the generation the
// client last received as paced fills the tick slot, the authority's failure
// of that generation is queued once as an error frame behind that tick, and
// a missing domain ends the attachment with one end frame. It ends when
// it has caught up; the fan-out delivers the ticks that arrive meanwhile
// and starts it again at the next change of installation or failure.
func (s *Session) deliver(ctx context.Context, a *attachment) {
	for {
		explore.Yield()
		o := a.obs.Read()
		last := a.last // written by this task only
		switch {
		case o.Missing:
			a.ending.Store(true)
			a.setBusy(true) // for good: nothing follows the end
			s.lane.withdrawTick(a)
			end := wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameEnd, Reason: wire.DomainRemoved}
			if s.fits(a, end) {
				_ = s.lane.pushFrame(ctx, a, end)
			}
			a.mu.Lock()
			a.halted = true
			a.caughtUpLocked()
			a.mu.Unlock()
			return
		case o.Clock != last:
			a.setBusy(true)
			s.lane.withdrawTick(a)
			if a.unfit != nil && *a.unfit == o.Clock {
				a.setBusy(false)
				break
			}
			f := wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameState, Clock: o.Clock}
			if !s.fits(a, f) {
				unfit := o.Clock
				a.unfit = &unfit
				a.setBusy(false)
				break
			}
			if err := s.lane.pushFrame(ctx, a, f); err != nil {
				return
			}
			a.mu.Lock()
			if o.Clock.Generation != last.Generation {
				a.lastTick = 0
			}
			// A node still interrupted says so again about the new clock.
			a.last, a.busy, a.interrupted = o.Clock, false, false
			a.mu.Unlock()
			a.unfit = nil
			// Changes published while the frame waited for room collapse
			// into the newest installation, read at once.
			continue
		case o.Tick.ID != 0:
			a.offerAccepted(o)
		}
		// The failure follows the state the client received as paced for
		// its generation and any tick of it already queued; none of that
		// generation comes after it.
		if fl := o.Failure; fl != nil && o.Clock == a.last && a.last.State == clock.Paced &&
			fl.Generation == a.last.Generation && a.failedGen() != fl.Generation {
			a.setBusy(true)
			a.mu.Lock()
			a.failed = fl.Generation
			a.mu.Unlock()
			f := wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameError, Failure: *fl}
			if s.fits(a, f) {
				if err := s.lane.pushFrame(ctx, a, f); err != nil {
					return
				}
			}
			a.setBusy(false)
			continue
		}
		// The node cannot vouch for its clocks: the client is told once,
		// behind what it holds, with any untaken tick withdrawn, and no
		// tick follows (offerTick) until the node vouches again, when a
		// state frame of the clock the client holds resumes it.
		if in := o.Interrupted; (in != nil) != a.isInterrupted() && o.Clock == a.last {
			a.setBusy(true)
			f := wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameState, Clock: a.last}
			if in != nil {
				s.lane.withdrawTick(a)
				f = wire.Frame{Domain: a.domain, Attachment: a.id, Kind: wire.FrameInterrupted,
					Failure: interruptionFailure(a.domain, a.last.Generation, in)}
			}
			if s.fits(a, f) {
				if err := s.lane.pushFrame(ctx, a, f); err != nil {
					return
				}
			}
			a.mu.Lock()
			a.interrupted, a.busy = in != nil, false
			a.mu.Unlock()
			continue
		}
		// Caught up: end, unless woken meanwhile.
		a.mu.Lock()
		if !a.dirty {
			a.caughtUpLocked()
			a.mu.Unlock()
			return
		}
		a.dirty = false
		a.mu.Unlock()
	}
}

// offerAccepted offers o's accepted tick, if any, with the node's reading
// of its generation (offerTick). A replaced installation
// (clockrt.ErrClockUnavailable) leaves it unsent, since the replacement
// wakes the task, which reads anew; a reading that fails otherwise is
// logged and the tick skipped.
func (a *attachment) offerAccepted(o clockrt.Observation) {
	if o.Tick.ID == 0 {
		return
	}
	snap, err := a.obs.Reading(o.Tick.Generation)
	if !errors.Is(err, clockrt.ErrClockUnavailable) {
		a.offerTick(o, newTickRecord(o.Tick, snap, err), err)
	}
}

func (a *attachment) setBusy(busy bool) {
	a.mu.Lock()
	a.busy = busy
	a.mu.Unlock()
}

func (a *attachment) isInterrupted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.interrupted
}

// interruptionFailure is the report an interrupted frame carries.
func interruptionFailure(domain string, generation uint64, in *clockrt.Interruption) wire.ClockFailure {
	return wire.ClockFailure{Domain: domain, Generation: generation, Op: "authority lease",
		Code: wire.CodeOf(wire.ErrClockInterrupted), Cause: in.Cause,
		Message: wire.ErrClockInterrupted.Error() + ": " + in.Cause}
}

func (a *attachment) failedGen() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}
