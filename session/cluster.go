package session

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// ClusterStatusSource returns the status SHOW CLUSTER STATUS shows.
type ClusterStatusSource func(ctx context.Context) (wire.ClusterStatus, error)

// MaxClusterStatusDomains is the most domain rows SHOW CLUSTER STATUS
// shows: the first by name of the domains it selects. The rest are
// counted in a warning that says how many of them have a clock failure and
// how to narrow the list (SHOW CLUSTER STATUS LIKE), so the statement stays
// readable, and its reply bounded, at any number of domains.
const MaxClusterStatusDomains = 1000

// showClusterStatus is SHOW CLUSTER STATUS: one row per node, then one row
// per domain, paced or unpaced, whose name matches p.Like, at most
// MaxClusterStatusDomains of them; the message names the raft term, and
// the warnings what needs an operator (clusterWarnings).
func (s *Session) showClusterStatus(ctx context.Context, p planner.ShowClusterStatus) (wire.Result, error) {
	var st wire.ClusterStatus
	if s.cluster != nil {
		var err error
		if st, err = s.cluster(ctx); err != nil {
			return wire.Result{}, err
		}
	} else {
		st = s.embeddedClusterStatus()
	}
	msg := clusterMessage(st)
	selected := st.Domains[:0:0]
	for _, d := range st.Domains {
		if p.Like == "" || grammar.MatchLike(p.Like, d.Name) {
			selected = append(selected, d)
		}
	}
	if p.Like != "" {
		word := " domains like "
		if len(selected) == 1 {
			word = " domain like "
		}
		msg += ", " + formatCount(len(selected)) + word + grammar.FormatLikePattern(p.Like)
	}
	if st.Term > 0 {
		msg += ", raft term " + formatCount(int(st.Term))
	}
	warnings := clusterWarnings(st)
	if len(selected) > MaxClusterStatusDomains {
		sort.Slice(selected, func(i, j int) bool { return selected[i].Name < selected[j].Name })
		failing := 0
		for _, d := range selected[MaxClusterStatusDomains:] {
			if d.ClockFailure != "" {
				failing++
			}
		}
		warnings = append(warnings, fmt.Sprintf("showing the first %s of %s domains by name (%s of those left out have a clock failure); narrow the list with SHOW CLUSTER STATUS LIKE '<pattern>'",
			formatCount(MaxClusterStatusDomains), formatCount(len(selected)), formatCount(failing)))
		selected = selected[:MaxClusterStatusDomains]
	}
	st.Domains = selected
	return wire.Result{Set: ClusterStatusSet(st), Message: msg, Warnings: warnings}, nil
}

// embeddedClusterStatus is the status of an embedded node: itself alone.
func (s *Session) embeddedClusterStatus() wire.ClusterStatus {
	id := s.node.Identity()
	_, rev, _ := s.node.Installed()
	st := wire.ClusterStatus{Nodes: []wire.ClusterNode{{
		Name: id.Node, Incarnation: id.Incarnation, Voter: true,
		Leader: s.node.IsLeader(), Available: true, Revision: rev,
	}}}
	if c, ok := s.node.(interface{ CatalogState() *lifecycle.State }); ok {
		st.Nodes[0].Maintenance = lifecycle.Maintenance(c.CatalogState())[id.Node]
	}
	if t, ok := s.node.(interface{ Term() uint64 }); ok {
		st.Term = t.Term()
	}
	for _, d := range s.node.Domains() {
		var failure *wire.ClockFailure
		if d.Pace == lifecycle.Paced {
			failure = s.clockFailure(d)
		}
		wd := wire.NewClusterDomain(d.Name, d.Status.String(), d.Generation, wire.ClusterAuthority(d.Authority), failure)
		wd.Pace, wd.Period, wd.Skew = d.Pace.String(), d.Period, d.Skew
		st.Domains = append(st.Domains, wd)
	}
	return st
}

// clusterWarnings are SHOW CLUSTER STATUS's warnings about st: no leader, a
// quorum at risk, nodes that are not available, running paced domains
// with no clock authority and clocks that failed, each saying what to do.
// A list of names stops at maxWarningNames.
func clusterWarnings(st wire.ClusterStatus) []string {
	const maxWarningNames = 10
	names := func(ns []string) string {
		if len(ns) > maxWarningNames {
			return strings.Join(ns[:maxWarningNames], ", ") + fmt.Sprintf(" and %s more", formatCount(len(ns)-maxWarningNames))
		}
		return strings.Join(ns, ", ")
	}
	var out []string
	leader := false
	voters, live := 0, 0
	var down []string
	for _, n := range st.Nodes {
		leader = leader || n.Leader
		if n.Voter {
			voters++
			if n.Available {
				live++
			}
		}
		if !n.Available {
			down = append(down, n.Name)
		}
	}
	if !leader {
		out = append(out, "no node is the consensus leader: writes wait for an election; if none comes, check that a majority of the voters is running and can reach each other")
	}
	if voters > 0 && live <= voters/2 {
		out = append(out, fmt.Sprintf("quorum lost: %s of %s voters available, and a majority is needed to commit; start or reconnect voters",
			formatCount(live), formatCount(voters)))
	} else if voters > 1 && live == voters/2+1 {
		out = append(out, fmt.Sprintf("quorum at risk: %s of %s voters available, so one more loss stops every write", formatCount(live), formatCount(voters)))
	}
	if len(down) > 0 {
		out = append(out, "not available: "+names(down)+"; their clocks move to other nodes, and a node that stays gone can be removed with nspl node remove")
	}
	var unassigned, failed []string
	for _, d := range st.Domains {
		if d.Pace != lifecycle.Paced.String() || d.Status != lifecycle.Running.String() {
			continue
		}
		if !(lifecycle.AuthorityFence{Node: d.Authority.Node, Incarnation: d.Authority.Incarnation}).Assigned() {
			unassigned = append(unassigned, grammar.FormatName(d.Name))
		}
		if d.ClockFailure != "" {
			failed = append(failed, grammar.FormatName(d.Name))
		}
	}
	if len(unassigned) > 0 {
		out = append(out, "running with no clock authority: "+names(unassigned)+"; they tick again once a live voter takes them (add or uncordon a node)")
	}
	if len(failed) > 0 {
		out = append(out, "clock failed at its authority: "+names(failed)+"; see the clock_failure column, and STOP and START the domain once its cause is fixed")
	}
	return out
}

func clusterMessage(st wire.ClusterStatus) string {
	n, avail := len(st.Nodes), 0
	for _, nd := range st.Nodes {
		if nd.Available {
			avail++
		}
	}
	word := "nodes"
	if n == 1 {
		word = "node"
	}
	return formatCount(n) + " " + word + ", " + formatCount(avail) + " available"
}

func formatCount(n int) string { return wire.Uint(uint64(n)).String() }

// ClusterStatusSet renders st as SHOW CLUSTER STATUS's result set, with the
// columns kind ("node" or "domain"), name, incarnation, voter, leader,
// available, revision (a node's advertised revision, a domain's authority
// revision), authority (a domain's authority "node#incarnation", "unassigned"
// while none is committed), generation, status and clock_failure (the full
// typed report of a domain's clock failure, null while none), pace
// ("PACED" or "UNPACED"), period and skew (a paced domain's; an unpaced
// domain's revision, authority, period and skew are null). A node row's
// status is its maintenance state: "cordoned", "draining" (cordoned and
// still owning a running clock), null in service. Nodes are
// sorted by name, domains by name; columns that do not apply to a row are
// null.
func ClusterStatusSet(st wire.ClusterStatus) *wire.ResultSet {
	set := &wire.ResultSet{Columns: []wire.Column{
		{Name: "kind", Type: wire.KindText},
		{Name: "name", Type: wire.KindText},
		{Name: "incarnation", Type: wire.KindUint},
		{Name: "voter", Type: wire.KindText},
		{Name: "leader", Type: wire.KindText},
		{Name: "available", Type: wire.KindText},
		{Name: "revision", Type: wire.KindUint},
		{Name: "authority", Type: wire.KindText},
		{Name: "generation", Type: wire.KindUint},
		{Name: "status", Type: wire.KindText},
		{Name: "clock_failure", Type: wire.KindText},
		{Name: "pace", Type: wire.KindText},
		{Name: "period", Type: wire.KindDuration},
		{Name: "skew", Type: wire.KindDuration},
	}}
	nodes := append([]wire.ClusterNode(nil), st.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		set.Rows = append(set.Rows, []wire.Value{
			wire.Text("node"), wire.Text(n.Name), wire.Uint(n.Incarnation), yesNo(n.Voter), yesNo(n.Leader),
			yesNo(n.Available), wire.Uint(n.Revision), wire.Null(), wire.Null(), maintenanceValue(n.Maintenance), wire.Null(),
			wire.Null(), wire.Null(), wire.Null(),
		})
	}
	domains := append([]wire.ClusterDomain(nil), st.Domains...)
	sort.Slice(domains, func(i, j int) bool { return domains[i].Name < domains[j].Name })
	for _, d := range domains {
		auth := "unassigned"
		if fence := (lifecycle.AuthorityFence{Node: d.Authority.Node, Incarnation: d.Authority.Incarnation}); fence.Assigned() {
			auth = fence.Identity().String()
		}
		failure := wire.Null()
		if d.ClockFailure != "" {
			failure = wire.Text(d.ClockFailure)
		}
		paced := d.Pace == "" || d.Pace == lifecycle.Paced.String()
		revision, authority, period, skew := wire.Uint(d.Authority.Revision), wire.Text(auth), wire.Duration(d.Period), wire.Duration(d.Skew)
		if !paced {
			revision, authority, period, skew = wire.Null(), wire.Null(), wire.Null(), wire.Null()
		}
		pace := wire.Null()
		if d.Pace != "" {
			pace = wire.Text(d.Pace)
		}
		set.Rows = append(set.Rows, []wire.Value{
			wire.Text("domain"), wire.Text(d.Name), wire.Null(), wire.Null(), wire.Null(), wire.Null(),
			revision, authority, wire.Uint(d.Generation), wire.Text(d.Status), failure, pace, period, skew,
		})
	}
	return set
}

// maintenanceValue is a node row's status cell: null in service, else the
// committed maintenance state ("cordoned", "draining").
func maintenanceValue(state string) wire.Value {
	if state == "" {
		return wire.Null()
	}
	return wire.Text(state)
}

func yesNo(b bool) wire.Value {
	if b {
		return wire.Text("yes")
	}
	return wire.Text("no")
}
