package node

import (
	"errors"
	"sync"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
)

// onChange is the catalog's synchronous change hook: it runs on the apply
// goroutine in commit order, before the Propose that caused the change
// returns. It installs the domains the change names and touches no other,
// so a commit costs the same whatever the size of the catalog; a change
// that names none (a snapshot restore) installs the whole state.
func (n *Node) onChange(c catalog.Change) {
	n.installMu.Lock()
	defer n.installMu.Unlock()
	if c.Whole() {
		n.installLocked(c.State)
		return
	}
	n.installDomainsLocked(c.State, c.Domains)
}

// installLocked is the whole reconcile, O(domains): it installs every
// domain lifecycle of s into the registry and removes the domains s lacks,
// unless the node already installed a newer revision. It runs at Open and
// when a snapshot restore replaced the catalog; every other change installs
// only what it changed (installDomainsLocked). Once the node is ready it
// hands the revision to the producer set, which retires and starts
// producers and advances the installation counter once every producer the
// revision retires has exited. n.installMu must be held.
func (n *Node) installLocked(s *lifecycle.State) {
	rev := s.Revision()
	if rev < n.installedRev {
		n.logger.Debug("ignoring an older catalog revision", "revision", rev, "installed", n.installedRev)
		return
	}
	n.installedRev = rev
	for _, name := range n.registry.Domains() {
		if _, ok := s.Domain(name); !ok {
			n.removeOneLocked(name)
		}
	}
	n.registry.Reserve(s.Len())
	s.Range(func(d lifecycle.Domain) bool {
		n.installOneLocked(d, rev)
		return true
	})
	if n.ready {
		n.producers.installedRevision(rev, nil, true)
	}
}

// installDomainsLocked installs the named domains of s, or removes those s
// no longer holds, and touches no other: the names are every domain the
// change to s created, changed or dropped (catalog.Change.Domains). Its
// cost is that of the names, not of the catalog. n.installMu must be held.
func (n *Node) installDomainsLocked(s *lifecycle.State, names []string) {
	rev := s.Revision()
	if rev < n.installedRev {
		n.logger.Debug("ignoring an older catalog revision", "revision", rev, "installed", n.installedRev)
		return
	}
	n.installedRev = rev
	for _, name := range names {
		if d, ok := s.Domain(name); ok {
			n.installOneLocked(d, rev)
		} else {
			n.removeOneLocked(name)
		}
	}
	if n.ready {
		n.producers.installedRevision(rev, names, false)
	}
}

// installOneLocked installs one committed domain lifecycle of revision rev.
func (n *Node) installOneLocked(d lifecycle.Domain, rev uint64) {
	n.installs.Add(1)
	lc := LifecycleOf(d, rev)
	_, err := n.registry.Install(d.Name, lc)
	switch {
	case err == nil:
		n.uninstalled.set(d.Name, lc.State == clockrt.StateUninstalled)
	case errors.Is(err, clockrt.ErrOlderRevision):
		n.logger.Debug("domain holds a newer revision", "domain", d.Name, "revision", rev)
	default:
		// The catalog keeps the domain invariants that Install checks;
		// failing here is a bug worth shouting about, not a reason to
		// stop installing the others.
		n.logger.Error("cannot install committed domain lifecycle", "domain", d.Name, "revision", rev, "err", err)
	}
}

// removeOneLocked removes a dropped domain's installation.
func (n *Node) removeOneLocked(name string) {
	n.installs.Add(1)
	n.uninstalled.set(name, false)
	n.registry.Remove(name)
}

// uninstalledSet is the running paced domains whose committed clock has no
// mapping or no assigned authority, kept as each domain is installed, so
// readiness reads it without a pass over the catalog.
type uninstalledSet struct {
	mu    sync.Mutex
	names map[string]struct{}
}

func (u *uninstalledSet) set(name string, uninstalled bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !uninstalled {
		delete(u.names, name)
		return
	}
	if u.names == nil {
		u.names = make(map[string]struct{})
	}
	u.names[name] = struct{}{}
}

// first returns how many domains the set holds and the first of them by
// name.
func (u *uninstalledSet) first() (int, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	first := ""
	for name := range u.names {
		if first == "" || name < first {
			first = name
		}
	}
	return len(u.names), first
}

// advanceCounter counts revision rev as installed: the counter advances,
// and the channel Installed returned is closed, unless rev was counted
// already. The producer set calls it (producerSet.countLocked).
func (n *Node) advanceCounter(rev uint64) {
	n.counterMu.Lock()
	defer n.counterMu.Unlock()
	if n.count > 0 && rev <= n.countRev {
		return
	}
	n.count++
	n.countRev = rev
	close(n.countChange)
	n.countChange = make(chan struct{})
}

// LifecycleOf maps a committed domain record to the lifecycle a node
// installs for it at catalog revision rev: stopped, unpaced, paced with its
// mapping and authority fence, or uninstalled while a paced domain runs
// without an assigned authority.
func LifecycleOf(d lifecycle.Domain, rev uint64) clockrt.Lifecycle {
	lc := clockrt.Lifecycle{
		Generation: d.Generation,
		StartPoint: d.LastStart.LogicalStart,
		Revision:   rev,
	}
	switch {
	case !d.Running():
		lc.State = clockrt.StateStopped
	case d.Pace == lifecycle.Unpaced:
		lc.State = clockrt.StateUnpaced
	case d.Mapping == nil || !d.Authority.Assigned():
		lc.State = clockrt.StateUninstalled
	default:
		lc.State = clockrt.StatePaced
		lc.Mapping = *d.Mapping
		lc.Period = d.Period
		lc.Skew = d.Skew
		lc.Authority = d.Authority
	}
	return lc
}
