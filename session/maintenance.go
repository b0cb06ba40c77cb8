package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// Maintainer is the part of an Engine that CORDON, UNCORDON and DRAIN NODE
// need; a *node.Node is one. An Engine without it refuses the statements
// with ErrNoMaintenance.
type Maintainer interface {
	// Cordon sets or clears the node's committed maintenance mark.
	Cordon(ctx context.Context, name string, cordoned bool) (lifecycle.Outcome, error)
	// Drain cordons the node and moves its clock authorities away one at
	// a time, returning the moves made.
	Drain(ctx context.Context, name string) ([]lifecycle.AuthorityMove, error)
}

// ErrNoMaintenance: the engine cannot cordon or drain nodes.
var ErrNoMaintenance = errors.New("this engine cannot cordon or drain nodes; run the statement against a node of the cluster")

// Columns of DRAIN NODE: one row per authority moved, in the order moved.
var drainColumns = []wire.Column{
	{Name: "domain", Type: wire.KindText},
	{Name: "from", Type: wire.KindText},
	{Name: "to", Type: wire.KindText},
	{Name: "revision", Type: wire.KindUint},
}

// maintain runs CORDON, UNCORDON or DRAIN NODE. They are cluster
// administration, which takes effect at once: never queued in a
// transaction.
func (s *Session) maintain(ctx context.Context, p planner.NodeMaintenance) (wire.Result, error) {
	stmt := string(p.Action) + " NODE"
	if err := s.refuseAdminInTransaction(stmt); err != nil {
		return wire.Result{}, err
	}
	m, ok := s.node.(Maintainer)
	if !ok {
		return wire.Result{}, ErrNoMaintenance
	}
	switch p.Action {
	case planner.Cordon, planner.Uncordon:
		cordon := p.Action == planner.Cordon
		res, err := m.Cordon(ctx, p.Node, cordon)
		if err != nil {
			return wire.Result{}, err
		}
		var msg string
		switch {
		case cordon && res.Changed:
			msg = fmt.Sprintf("cordoned node '%s': it keeps the clocks it owns but is given no new one (DRAIN NODE %s moves them away)", p.Node, p.Node)
		case cordon:
			msg = fmt.Sprintf("node '%s' is already cordoned", p.Node)
		case res.Changed:
			msg = fmt.Sprintf("uncordoned node '%s': it can be given clock authorities again", p.Node)
		default:
			msg = fmt.Sprintf("node '%s' is not cordoned; nothing changed", p.Node)
		}
		return wire.Result{Message: msg, Warnings: completionWarnings(res)}, nil
	}
	moves, err := m.Drain(ctx, p.Node)
	set := &wire.ResultSet{Columns: drainColumns, Rows: make([][]wire.Value, 0, len(moves))}
	for _, mv := range moves {
		set.Rows = append(set.Rows, []wire.Value{wire.Text(mv.Domain), wire.Text(mv.From.String()), wire.Text(mv.To.String()), wire.Uint(mv.Revision)})
	}
	if err != nil {
		if len(moves) > 0 {
			err = fmt.Errorf("%w (moved before stopping: %s)", err, movedList(moves))
		}
		return wire.Result{}, err
	}
	word := "clocks"
	if len(moves) == 1 {
		word = "clock"
	}
	return wire.Result{Set: set, Message: fmt.Sprintf("drained node '%s': moved %s %s; it stays cordoned until UNCORDON NODE %s",
		p.Node, formatCount(len(moves)), word, p.Node)}, nil
}

func movedList(moves []lifecycle.AuthorityMove) string {
	out := ""
	for i, mv := range moves {
		if i > 0 {
			out += ", "
		}
		out += "'" + mv.Domain + "' to " + mv.To.Node
	}
	return out
}

// refuseAdminInTransaction is refuseInTransaction for cluster
// administration: its message says the statement cannot be queued.
func (s *Session) refuseAdminInTransaction(statement string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil {
		return &TransactionError{Err: ErrInTransaction, Statement: statement, Domain: s.tx.domain, Admin: true}
	}
	return nil
}
