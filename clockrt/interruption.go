package clockrt

import "sync/atomic"

// Interruption says why this node cannot vouch for its clocks: it has
// lost contact with the consensus leader for longer than its authority
// lease, or it is catching up with the leader after regaining it. While a
// node is interrupted it produces no ticks and the ticks it holds may be
// another authority's past, so every attachment it serves is told (a
// session's interrupted frame) instead of stalling silently.
type Interruption struct {
	// Cause says what the node lost and what it waits for, in a sentence
	// an operator can act on.
	Cause string
}

// interruptions is a registry's node-wide interruption, nil when none;
// every allocation of the registry reads it.
type interruptions struct {
	cur atomic.Pointer[Interruption]
}

// SetInterrupted marks every clock of this node interrupted with cause
// (nil clears it) and wakes every observer, so each attachment re-reads
// its observation. Setting the same state again wakes nobody.
func (r *Registry) SetInterrupted(cause *Interruption) {
	old := r.interrupted.cur.Swap(cause)
	if (old == nil) == (cause == nil) {
		return
	}
	r.mu.RLock()
	allocs := make([]*Allocation, 0, len(r.domains))
	for _, a := range r.domains {
		allocs = append(allocs, a)
	}
	r.mu.RUnlock()
	for _, a := range allocs {
		a.progress.wakeAll()
	}
}

// Interrupted returns the node's current interruption, nil when none.
func (r *Registry) Interrupted() *Interruption { return r.interrupted.cur.Load() }

// wakeAll wakes the watch's subscribers without changing it.
func (w *progressWatch) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakeLocked()
}
