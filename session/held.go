package session

import (
	"errors"
	"time"

	"github.com/nspl-dev/nspl/planner"
)

// HeldTransaction is an open transaction taken out of a session whose
// connection was lost (HoldTransaction), to be taken up by the session the
// reconnecting client opens (ResumeTransaction): its domain, its queued
// steps in order and the session's active domain. Nothing of it reached
// the catalog; dropping it reverts it.
type HeldTransaction struct {
	tx     transaction
	active string
}

// Domain returns the domain the transaction is bound to.
func (h HeldTransaction) Domain() string { return h.tx.domain }

// Steps returns how many steps the transaction has queued.
func (h HeldTransaction) Steps() int { return len(h.tx.steps) }

// Began returns the monotonic reading of the transaction's BEGIN, on the
// session's time source.
func (h HeldTransaction) Began() time.Duration { return h.tx.began }

// ErrTransactionOpen is ResumeTransaction on a session that already has
// an open transaction.
var ErrTransactionOpen = errors.New("transaction is already active on this session; COMMIT or ROLLBACK it before taking up another")

// HoldTransaction takes the session's open transaction out of it: ok is
// false when none is open. The session no longer has one, so closing it
// reverts nothing; the caller holds the transaction until it gives it to
// another session or drops it.
func (s *Session) HoldTransaction() (HeldTransaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		return HeldTransaction{}, false
	}
	h := HeldTransaction{tx: *s.tx, active: s.active}
	h.tx.steps = append([]planner.Plan(nil), s.tx.steps...)
	s.tx = nil
	return h, true
}

// ResumeTransaction makes h this session's open transaction, with h's
// active domain: the next statements queue after h's steps and COMMIT
// commits them all, as on the session h was taken from. The transaction
// idle timeout counts from now. A session that already has a transaction
// open refuses it (ErrTransactionOpen); so does a closed one (ErrClosed).
func (s *Session) ResumeTransaction(h HeldTransaction) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return ErrClosed
	case s.tx != nil:
		return ErrTransactionOpen
	}
	tx := h.tx
	tx.steps = append([]planner.Plan(nil), h.tx.steps...)
	s.tx = &tx
	s.active = h.active
	s.lastRequest = s.src.Monotonic()
	return nil
}
