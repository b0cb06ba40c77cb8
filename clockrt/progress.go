package clockrt

import (
	"fmt"
	"sync"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// Tick is one accepted tick of a paced domain, in wire's vocabulary: the
// newest progress the domain's authority reported and this node accepted.
// The zero Tick (ID 0) means no tick has been accepted for the current
// generation.
type Tick = wire.Tick

// ClockFailure is the typed report of a paced clock whose tick producer
// failed at the domain's authority, in wire's vocabulary.
type ClockFailure = wire.ClockFailure

// ProgressReport is one tick as the authority reports it: the fence it was
// produced under (generation, authority revision and full identity) and the
// tick itself. The period travels for diagnostics only; a receiver never
// takes a mapping, period or time from a report.
//
// A producer's last report, when its arithmetic failed, also carries
// Failure: the typed report of the failure, for the domain and generation
// of the report. Its tick is then the newest tick the producer emitted
// (ID 0 when it emitted none).
type ProgressReport struct {
	Domain       string
	Generation   uint64
	Authority    lifecycle.AuthorityFence
	ID           uint64
	Boundary     int64
	AuthorityUTC int64
	Period       uint64
	Failure      *ClockFailure
}

// Tick returns the tick the report carries.
func (r ProgressReport) Tick() Tick {
	return Tick{Generation: r.Generation, ID: r.ID, Boundary: r.Boundary, AuthorityUTC: r.AuthorityUTC}
}

// progressWatch is one domain's progress watch: the newest accepted tick,
// the accepted failure of the authority's producer, and a wake channel
// closed when either changes. Accepting (compare and replace) and clearing
// are serialised by mu, so concurrent deliveries cannot replace newer
// progress with an older report. The wake channel is made only when
// someone subscribes, so a domain nobody observes accepts ticks without
// allocating.
type progressWatch struct {
	mu      sync.Mutex
	tick    Tick
	failure *ClockFailure // immutable once published; nil when none
	wake    chan struct{}
}

// subscribe returns the current tick and failure and a channel closed at
// the next change, read together so that no change is missed.
func (w *progressWatch) subscribe() (Tick, *ClockFailure, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wake == nil {
		w.wake = make(chan struct{})
	}
	return w.tick, w.failure, w.wake
}

// loadFailure returns the retained failure, nil when none.
func (w *progressWatch) loadFailure() *ClockFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// load returns the current tick.
func (w *progressWatch) load() Tick {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tick
}

// replaceLocked publishes t and wakes subscribers (send_replace). w.mu must
// be held.
func (w *progressWatch) replaceLocked(t Tick) {
	w.tick = t
	w.wakeLocked()
}

func (w *progressWatch) wakeLocked() {
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
}

// syncInstalled clears the watch when lc no longer runs the retained tick's
// or failure's generation: a generation change, a STOP or the removal of
// the domain. It is called after the installation was stored, so a report
// validated against the replaced installation either landed before the
// clear or is validated again against the replacement.
func (w *progressWatch) syncInstalled(lc Lifecycle) {
	w.mu.Lock()
	defer w.mu.Unlock()
	running := lc.State == StatePaced || lc.State == StateUninstalled
	if f := w.failure; f != nil && (!running || lc.Generation != f.Generation) {
		w.failure = nil
		w.wakeLocked()
	}
	if w.tick.ID == 0 {
		return
	}
	if !running || lc.Generation != w.tick.Generation {
		w.replaceLocked(Tick{})
	}
}

// Progress returns the domain's newest accepted tick, the zero Tick when
// none is retained for the installed generation (or the domain is not
// installed).
func (r *Registry) Progress(domain string) Tick {
	a, ok := r.Lookup(domain)
	if !ok {
		return Tick{}
	}
	return a.progress.load()
}

// AcceptProgress evaluates one progress report received from the
// authenticated node from (for the node's own producer, its own name) and
// publishes it through the domain's progress watch when it is current and
// newer. It reports whether the report replaced the retained tick.
//
// A report is refused, with a *ClockError, when the domain is not installed
// (ErrDomainMissing) or stopped (ErrDomainStopped), when its tick id is
// zero (ErrInvalidProgress), and when it does not match the installed paced
// clock's generation, authority revision, authority node name and
// incarnation, or when from is not the authority's node (ErrProgressFence).
// A report matching the fence is refused as implausible
// (ErrImplausibleProgress) when its boundary is not its tick's boundary
// under the installed mapping, or its tick id or authority UTC is further
// ahead of this node's UTC than the max clock offset allows
// (SetMaxClockOffset; see checkPlausible for the exact tolerance): a
// forged far-future report can then never be retained and hold back the
// genuine ticks after it. A report that passes both is newer only when its
// tick id advances past the retained one and its authority UTC does not
// precede the retained one; duplicate, reordered, delayed and superseded
// reports are ignored with (false, nil).
//
// A report that carries a Failure passes the same fence; its tick, when its
// ID is not zero, is evaluated as above, and the failure is retained for
// the generation (the first accepted one; later ones of the generation,
// such as a reassigned authority failing the same arithmetic, are
// ignored). It reports true when the tick or the failure was published.
// The failure is cleared with the tick, by the next generation, a STOP or
// the removal of the domain.
//
// Progress never creates a domain and never changes an installation: the
// mapping, period and time stay those the catalog committed.
func (r *Registry) AcceptProgress(from string, rep ProgressReport) (bool, error) {
	a, ok := r.Lookup(rep.Domain)
	if !ok {
		return false, &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrDomainMissing}
	}
	w := &a.progress
	w.mu.Lock()
	defer w.mu.Unlock()
	in := a.cur.Load()
	if err := checkProgress(in, from, rep); err != nil {
		return false, err
	}
	if rep.Failure != nil && rep.ID == 0 {
		return w.failLocked(rep.Failure), nil
	}
	if err := checkPlausible(in.lc, rep, r.src.Now(), r.MaxClockOffset()); err != nil {
		return false, err
	}
	newer := true
	if cur := w.tick; cur.ID != 0 && cur.Generation == rep.Generation {
		if rep.ID <= cur.ID || rep.AuthorityUTC < cur.AuthorityUTC {
			newer = false
		}
	}
	if newer {
		w.replaceLocked(rep.Tick())
	}
	if rep.Failure != nil && w.failLocked(rep.Failure) {
		newer = true
	}
	return newer, nil
}

// failLocked retains f unless a failure of its generation is already
// retained, waking subscribers; it reports whether f was retained. w.mu
// must be held and f validated against the installed fence.
func (w *progressWatch) failLocked(f *ClockFailure) bool {
	if w.failure != nil && w.failure.Generation == f.Generation {
		return false
	}
	kept := *f // the sender's copy stays the sender's
	w.failure = &kept
	w.wakeLocked()
	return true
}

// ClockFailure returns the failure the domain's authority reported for
// the installed generation, and nil when none is retained (or the domain
// is not installed).
func (r *Registry) ClockFailure(domain string) *ClockFailure {
	a, ok := r.Lookup(domain)
	if !ok {
		return nil
	}
	return a.progress.loadFailure()
}

// checkProgress validates rep, received from the node named from, against
// the installation in.
func checkProgress(in *Installation, from string, rep ProgressReport) error {
	fence := func(format string, args ...any) error {
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrProgressFence,
			Detail: fmt.Sprintf(format, args...)}
	}
	lc := in.lc
	switch {
	case lc.State == StateMissing:
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrDomainMissing}
	case lc.State == StateStopped:
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrDomainStopped}
	case rep.ID == 0 && rep.Failure == nil:
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrInvalidProgress,
			Detail: fmt.Sprintf("tick id 0 from node %q", from)}
	case rep.Failure != nil && (rep.Failure.Domain != rep.Domain || rep.Failure.Generation != rep.Generation || rep.Failure.Message == ""):
		return &ClockError{Op: "progress", Domain: rep.Domain, Generation: rep.Generation, Err: ErrInvalidProgress,
			Detail: fmt.Sprintf("clock failure from node %q names domain %q generation %d, or no report", from, rep.Failure.Domain, rep.Failure.Generation)}
	case lc.State != StatePaced:
		return fence("the domain is %s here and has no installed authority", lc.State)
	case rep.Generation != lc.Generation:
		return fence("installed generation is %d", lc.Generation)
	case rep.Authority.Revision != lc.Authority.Revision:
		return fence("authority revision %d, installed revision is %d", rep.Authority.Revision, lc.Authority.Revision)
	case rep.Authority.Node != lc.Authority.Node || rep.Authority.Incarnation != lc.Authority.Incarnation:
		return fence("authority %s, installed authority is %s", rep.Authority.Identity(), lc.Authority.Identity())
	case from != lc.Authority.Node:
		return fence("reported by node %q, installed authority is %s", from, lc.Authority.Identity())
	}
	return nil
}
