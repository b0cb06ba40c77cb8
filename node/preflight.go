package node

import (
	"fmt"

	"github.com/nspl-dev/nspl/lifecycle"
)

// PreflightTransaction reports whether steps, committed now as one
// transaction on domain, would apply: it resolves them exactly as
// CommitTransaction does, against the same catalog state, and applies the
// resulting command to a copy of that state with lifecycle's transitions,
// the ones the catalog applies at COMMIT. Nothing is proposed, nothing is
// installed and the catalog is not changed; like CommitTransaction it reads
// the raft configuration for a START's authority candidates, and waits for
// nothing else.
//
// The error is the one CommitTransaction would return for the same steps
// now: a refused step is a *lifecycle.Error whose Step names it, with the
// same code, sentinel and message ("transaction step 2 (start): domain
// 'prod' is already running; …"); a step whose Op is none of StepStart,
// StepStop and StepAlterPlacement (planner.Step gives one for a statement
// that cannot be queued) is ErrNotTransactional. A session preflights each step it queues, with the
// steps queued before it, so a step that cannot follow them is refused
// when it is queued. Passing is no promise: COMMIT validates again against
// the state committed by then, which another session may have changed.
func (n *Node) PreflightTransaction(domain string, steps []lifecycle.StepRequest) error {
	s, tx, err := n.resolveTransaction(domain, steps)
	if err != nil || len(tx.Steps) == 0 {
		return err
	}
	return s.Clone().Apply(lifecycle.Command{Op: lifecycle.OpTransaction, Transaction: &tx}).Err()
}

// resolveTransaction turns a transaction's queued steps into the command
// payload CommitTransaction proposes and PreflightTransaction tries: the
// steps resolved together, at one UTC instant sampled now, against the
// catalog state s it returns. No steps give an empty transaction and no
// error when the domain exists.
func (n *Node) resolveTransaction(domain string, steps []lifecycle.StepRequest) (*lifecycle.State, lifecycle.Transaction, error) {
	for i, st := range steps {
		switch st.Op {
		case lifecycle.StepStart, lifecycle.StepStop, lifecycle.StepAlterPlacement:
		default:
			return nil, lifecycle.Transaction{}, fmt.Errorf("%w: step %d is %q", ErrNotTransactional, i+1, string(st.Op))
		}
	}
	s := n.catalog.State()
	d, ok := s.Domain(domain)
	if !ok {
		return nil, lifecycle.Transaction{}, errNotFound(domain)
	}
	if len(steps) == 0 {
		return s, lifecycle.Transaction{Domain: domain}, nil
	}
	utc := n.src.Now()
	available, voters, err := n.candidates(s)
	if err != nil {
		return nil, lifecycle.Transaction{}, err
	}
	tx, err := lifecycle.ResolveTransaction(d, steps, utc, n.readable(d, utc), available, voters)
	if err != nil {
		return nil, lifecycle.Transaction{}, err
	}
	return s, tx, nil
}
