package node

import (
	"errors"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime"
)

// onChange is the catalog's synchronous change hook: it runs on the apply
// goroutine in commit order, before the Propose that caused the change
// returns.
func (n *Node) onChange(c catalog.Change) {
	n.installMu.Lock()
	defer n.installMu.Unlock()
	n.installLocked(c.State)
}

// installLocked installs every domain lifecycle of s into the registry and
// removes the domains s lacks, unless the node already installed a newer
// revision. Once the node is ready it hands the revision to the producer
// set, which retires and starts producers and advances the installation
// counter once every producer the revision retires has exited.
// n.installMu must be held.
func (n *Node) installLocked(s *lifecycle.State) {
	rev := s.Revision()
	if rev < n.installedRev {
		n.logger.Debug("ignoring an older catalog revision", "revision", rev, "installed", n.installedRev)
		return
	}
	n.installedRev = rev
	present := make(map[string]struct{})
	for _, d := range s.Domains() {
		present[d.Name] = struct{}{}
		if _, err := n.registry.Install(d.Name, LifecycleOf(d, rev)); err != nil {
			if errors.Is(err, runtime.ErrOlderRevision) {
				n.logger.Debug("domain holds a newer revision", "domain", d.Name, "revision", rev)
				continue
			}
			// The catalog keeps the domain invariants that Install checks;
			// failing here is a bug worth shouting about, not a reason to
			// stop installing the others.
			n.logger.Error("cannot install committed domain lifecycle", "domain", d.Name, "revision", rev, "err", err)
		}
	}
	for _, name := range n.registry.Domains() {
		if _, ok := present[name]; !ok {
			n.registry.Remove(name)
		}
	}
	if n.ready {
		n.producers.installedRevision(rev)
	}
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
func LifecycleOf(d lifecycle.Domain, rev uint64) runtime.Lifecycle {
	lc := runtime.Lifecycle{
		Generation: d.Generation,
		StartPoint: d.LastStart.LogicalStart,
		Revision:   rev,
	}
	switch {
	case !d.Running():
		lc.State = runtime.StateStopped
	case d.Pace == lifecycle.Unpaced:
		lc.State = runtime.StateUnpaced
	case d.Mapping == nil || !d.Authority.Assigned():
		lc.State = runtime.StateUninstalled
	default:
		lc.State = runtime.StatePaced
		lc.Mapping = *d.Mapping
		lc.Period = d.Period
		lc.Skew = d.Skew
		lc.Authority = d.Authority
	}
	return lc
}
