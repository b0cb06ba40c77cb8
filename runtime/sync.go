package runtime

import (
	"context"
	"slices"
)

// SyncState counts the complete synchronisations a registry has applied.
type SyncState struct {
	// Count is the number of Sync calls that put every domain in place.
	Count uint64
	// Revision is the catalog revision of the latest of them.
	Revision uint64
}

// Sync synchronises every domain with one committed catalog revision:
// each domain in lifecycles is installed (with Revision set to revision),
// and every installed domain absent from it is removed, publishing missing
// first. Only then does the sync count advance and wake WaitSynced callers,
// so a lookup after the wait finds every domain that revision holds.
//
// Sync is all or nothing with respect to validation: an invalid lifecycle
// or a revision older than the last synchronised one installs nothing. A
// domain already holding a newer revision (installed directly with Install)
// keeps it; that domain is left as it is, even when revision lacks it.
func (r *Registry) Sync(revision uint64, lifecycles map[string]Lifecycle) error {
	names := make([]string, 0, len(lifecycles))
	for name, lc := range lifecycles {
		if name == "" {
			return &ClockError{Op: "sync", Err: ErrInvalidLifecycle, Detail: "domain name is empty"}
		}
		if why := lc.validate(); why != "" {
			return &ClockError{Op: "sync", Domain: name, Generation: lc.Generation, Err: ErrInvalidLifecycle, Detail: why}
		}
		names = append(names, name)
	}
	slices.Sort(names)

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.synced.Count > 0 && revision < r.synced.Revision {
		return &ClockError{Op: "sync", Err: ErrOlderRevision}
	}
	for _, name := range names {
		lc := lifecycles[name]
		lc.Revision = revision
		if a, ok := r.domains[name]; ok && a.revision > revision {
			continue
		}
		if _, err := r.installLocked(name, lc.normalized()); err != nil {
			return err // unreachable: validated and revision-checked above
		}
	}
	for name, a := range r.domains {
		if _, keep := lifecycles[name]; !keep && a.revision <= revision {
			r.removeLocked(name)
		}
	}
	r.synced = SyncState{Count: r.synced.Count + 1, Revision: revision}
	close(r.syncCh)
	r.syncCh = make(chan struct{})
	return nil
}

// Synced returns the current sync state and a channel closed by the next
// Sync.
func (r *Registry) Synced() (SyncState, <-chan struct{}) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.synced, r.syncCh
}

// WaitSynced waits until at least count synchronisations have completed,
// or ctx ends (returning a *ClockError wrapping ErrWaitCancelled and ctx's
// error). WaitSynced(ctx, 1) is the wait an attach performs before looking
// a domain up: until the first Sync every domain reads as missing.
func (r *Registry) WaitSynced(ctx context.Context, count uint64) (SyncState, error) {
	for {
		st, next := r.Synced()
		if st.Count >= count {
			return st, nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return st, &ClockError{Op: "wait for sync", Err: ErrWaitCancelled, Cause: ctx.Err()}
		}
	}
}
