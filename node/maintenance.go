package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Cordon sets (cordoned) or clears the maintenance mark of the registered
// node name, through the replicated catalog, so every node agrees and the
// mark survives a restart. A cordoned node keeps the clock authorities it
// holds but is given no new one while an uncordoned candidate exists
// (lifecycle.State.PreferUncordoned). An unregistered name is a
// *lifecycle.Error with CodeUnknownNode.
func (n *Node) Cordon(ctx context.Context, name string, cordoned bool) (Outcome, error) {
	return n.propose(ctx, "", lifecycle.Command{Op: lifecycle.OpCordonNode, CordonNode: &lifecycle.CordonNode{Name: name, Cordoned: cordoned}})
}

// Drain cordons the node name, then hands the clock authority of every
// running paced domain it holds to another candidate, one domain at a time:
// each hand-over is one compare-and-set reassignment that returns once every
// live node has installed it (the completion boundary of a write), so the
// old authority has stopped and the new one produces before the next domain
// moves. It returns the moves made, in order. When no other candidate can
// take a domain, or ctx ends first, it returns the moves made so far with a
// *lifecycle.Error (CodeNoLiveVoter) naming the domains left on the node.
func (n *Node) Drain(ctx context.Context, name string) ([]lifecycle.AuthorityMove, error) {
	if _, err := n.Cordon(ctx, name, true); err != nil {
		return nil, err
	}
	var moves []lifecycle.AuthorityMove
	for {
		s := n.catalog.State()
		held := heldBy(s, name)
		if len(held) == 0 {
			return moves, nil
		}
		if err := ctx.Err(); err != nil {
			return moves, drainLeft(name, held, "its deadline passed first ("+err.Error()+")")
		}
		d := held[0]
		available, voters, err := n.candidates(s)
		if err != nil {
			return moves, err
		}
		others := available[:0:0]
		for _, a := range available {
			if a.Node != name {
				others = append(others, a)
			}
		}
		to, ok := lifecycle.SelectAuthority(d.Name, s.PreferUncordoned(others, voters), voters)
		if !ok {
			return moves, drainLeft(name, held, "no other live voting node can take them")
		}
		from := d.Authority.Identity()
		out, err := n.propose(ctx, d.Name, lifecycle.Command{Op: lifecycle.OpReassignAuthority, ReassignAuthority: &lifecycle.ReassignAuthority{
			Domain: d.Name, ExpectedGeneration: d.Generation, ExpectedFence: d.Authority, Authority: &to,
		}})
		var le *lifecycle.Error
		if errors.As(err, &le) && le.Code == lifecycle.CodeAuthorityConflict {
			continue // the domain changed meanwhile (stopped, moved): look again
		}
		if err != nil {
			if ctx.Err() != nil {
				return moves, drainLeft(name, heldBy(n.catalog.State(), name), "its deadline passed first ("+err.Error()+")")
			}
			return moves, err
		}
		moves = append(moves, lifecycle.AuthorityMove{Domain: d.Name, From: from, To: to, Revision: out.Revision})
	}
}

// heldBy returns the running paced domains whose committed authority is on
// the node name, by name.
func heldBy(s *lifecycle.State, name string) []lifecycle.Domain {
	var out []lifecycle.Domain
	s.RangeSorted(func(d lifecycle.Domain) bool {
		if d.Pace == lifecycle.Paced && d.Running() && d.Authority.Assigned() && d.Authority.Node == name {
			out = append(out, d)
		}
		return true
	})
	return out
}

func drainLeft(name string, held []lifecycle.Domain, why string) error {
	names := make([]string, len(held))
	for i, d := range held {
		names[i] = "'" + d.Name + "'"
	}
	return &lifecycle.Error{Code: lifecycle.CodeNoLiveVoter, Domain: held[0].Name, Message: fmt.Sprintf(
		"node '%s' is cordoned but still owns the clock of %s: %s; add or uncordon another node and run DRAIN NODE %s again, or UNCORDON NODE %s to keep it in service",
		name, strings.Join(names, ", "), why, name, name)}
}
