package clockrt

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Registry holds one node's shared lifecycle allocations, one per domain.
//
// Control-plane synchronisation calls Install and Remove; they serialise on
// one mutex and each publishes a complete replacement installation with one
// atomic store, then wakes everyone waiting on the replaced installation.
// Handles and observers keep the *Allocation itself, so their reads never
// consult the registry again and take no lock.
type Registry struct {
	src       timesource.Source
	physical  *PhysicalClock
	maxOffset atomic.Int64 // time.Duration: the max clock offset (plausibility.go)

	mu      sync.RWMutex
	domains map[string]*Allocation

	interrupted interruptions // interruption.go
}

// NewRegistry returns an empty registry whose clocks read src.
func NewRegistry(src timesource.Source) *Registry {
	r := &Registry{
		src:      src,
		physical: NewPhysicalClock(src),
		domains:  make(map[string]*Allocation),
	}
	r.maxOffset.Store(int64(DefaultMaxClockOffset))
	return r
}

// Source returns the registry's time source.
func (r *Registry) Source() timesource.Source { return r.src }

// Physical returns the physical-deadline capability of the registry's time
// source.
func (r *Registry) Physical() *PhysicalClock { return r.physical }

// Allocation is one domain's shared lifecycle allocation: the atomically
// published current installation. Subscriptions and observers retain it to
// follow the domain across generations without resolving it again.
type Allocation struct {
	domain string
	src    timesource.Source
	cur    atomic.Pointer[Installation]

	// revision is the newest catalog revision applied, guarded by the
	// registry's mu. It may be newer than the current installation's
	// revision when a later revision left the lifecycle unchanged.
	revision uint64

	// progress is the domain's accepted tick progress (progress.go).
	progress progressWatch
	// interrupted is the registry's node-wide interruption.
	interrupted *interruptions
}

// Domain returns the domain's name.
func (a *Allocation) Domain() string { return a.domain }

// Load returns the current installation. It takes no lock.
func (a *Allocation) Load() *Installation { return a.cur.Load() }

// Watch returns the current installation and a channel closed when it is
// replaced. Read the installation after subscribing, as Watch does, so that
// no publication is missed.
func (a *Allocation) Watch() (*Installation, <-chan struct{}) {
	in := a.cur.Load()
	return in, in.replaced
}

// Bind returns a handle bound to the domain and its installed generation.
// It fails with ErrDomainMissing, ErrDomainStopped or ErrClockUninstalled.
func (a *Allocation) Bind() (*Handle, error) {
	in := a.cur.Load()
	switch in.lc.State {
	case StateUnpaced, StatePaced:
		return &Handle{alloc: a, src: a.src, generation: in.lc.Generation}, nil
	case StateStopped:
		return nil, &ClockError{Op: "bind", Domain: a.domain, Generation: in.lc.Generation, Err: ErrDomainStopped}
	case StateUninstalled:
		return nil, &ClockError{Op: "bind", Domain: a.domain, Generation: in.lc.Generation, Err: ErrClockUninstalled}
	default:
		return nil, &ClockError{Op: "bind", Domain: a.domain, Err: ErrDomainMissing}
	}
}

// Lookup returns the domain's allocation, or false when the domain is not
// installed.
func (r *Registry) Lookup(domain string) (*Allocation, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.domains[domain]
	return a, ok
}

// Current returns the domain's current installation; a domain that is not
// installed reads as a missing installation that is never replaced.
func (r *Registry) Current(domain string) *Installation {
	if a, ok := r.Lookup(domain); ok {
		return a.Load()
	}
	return newInstallation(domain, Lifecycle{}, nil)
}

// Domains returns the installed domains' names in sorted order.
func (r *Registry) Domains() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.domains))
	for name := range r.domains {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Reserve prepares an empty registry for n domains, so installing a whole
// catalog does not grow its table step by step. It does nothing once any
// domain is installed.
func (r *Registry) Reserve(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.domains) == 0 && n > 0 {
		r.domains = make(map[string]*Allocation, n)
	}
}

// Bind binds a handle to the domain's installed generation. It fails with
// ErrDomainMissing, ErrDomainStopped or ErrClockUninstalled.
func (r *Registry) Bind(domain string) (*Handle, error) {
	a, ok := r.Lookup(domain)
	if !ok {
		return nil, &ClockError{Op: "bind", Domain: domain, Err: ErrDomainMissing}
	}
	return a.Bind()
}

// Install synchronises the domain's installation with lc, creating the
// domain's allocation if needed. It derives the replacement from the current
// installation and publishes it only if it differs (ignoring the revision):
// an unchanged lifecycle publishes nothing, wakes no waiter and reports
// false. A replacement that keeps the same generation installed shares the
// read frame and watermark of the installation it replaces (handle.go);
// any other replacement calibrates a new frame from one paired reading.
//
// Install refuses, with ErrOlderRevision, a lifecycle from an older catalog
// revision than the domain already holds, and with ErrInvalidLifecycle an
// inconsistent one.
func (r *Registry) Install(domain string, lc Lifecycle) (bool, error) {
	if domain == "" {
		return false, &ClockError{Op: "install", Domain: domain, Err: ErrInvalidLifecycle, Detail: "domain name is empty"}
	}
	if why := lc.validate(); why != "" {
		return false, &ClockError{Op: "install", Domain: domain, Generation: lc.Generation, Err: ErrInvalidLifecycle, Detail: why}
	}
	lc = lc.normalized()

	r.mu.Lock()
	defer r.mu.Unlock()
	return r.installLocked(domain, lc)
}

// installLocked installs a validated, normalised lifecycle. The registry's
// mu must be held.
func (r *Registry) installLocked(domain string, lc Lifecycle) (bool, error) {
	a, ok := r.domains[domain]
	if !ok {
		a = &Allocation{domain: domain, src: r.src, interrupted: &r.interrupted}
		a.cur.Store(newInstallation(domain, Lifecycle{}, nil))
		r.domains[domain] = a
	}
	if lc.Revision < a.revision {
		return false, &ClockError{Op: "install", Domain: domain, Generation: lc.Generation, Err: ErrOlderRevision}
	}
	a.revision = lc.Revision
	return a.publishLocked(lc), nil
}

// Remove publishes the domain as missing, waking every waiter, and then
// discards the allocation. Handles and observers that retain it keep reading
// missing; a later Install of the same name creates a new allocation. It
// reports whether the domain was installed.
func (r *Registry) Remove(domain string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.removeLocked(domain)
}

func (r *Registry) removeLocked(domain string) bool {
	a, ok := r.domains[domain]
	if !ok {
		return false
	}
	a.publishLocked(Lifecycle{State: StateMissing, Revision: a.revision})
	delete(r.domains, domain)
	return true
}

// publishLocked publishes lc, derived from the current installation, unless
// it installs the same clock. The registry's mu must be held.
func (a *Allocation) publishLocked(lc Lifecycle) bool {
	prev := a.cur.Load()
	if prev.lc.sameAs(lc) {
		return false
	}
	var c *generationClock
	switch {
	case !lc.State.Readable():
	case prev.lc.State.Readable() && prev.lc.Generation == lc.Generation:
		// The replacement shares the generation's frame and watermark. A
		// changed projection publishes its frame before the installation,
		// so a read of either installation that completes afterwards
		// projects through it, above the floor of everything read before.
		c = prev.clock
		c.reproject(a.src, lc)
	default:
		c = newGenerationClock(a.src, lc)
	}
	a.cur.Store(newInstallation(a.domain, lc, c))
	a.progress.syncInstalled(lc)
	close(prev.replaced)
	return true
}
