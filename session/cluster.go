package session

import (
	"context"
	"sort"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// ClusterStatus is what SHOW CLUSTER STATUS shows: the cluster's nodes and,
// per paced domain, its clock authority.
type ClusterStatus struct {
	Nodes   []ClusterNode
	Domains []DomainAuthority
}

// ClusterNode is one node as the serving node sees it.
type ClusterNode struct {
	// Name and Incarnation identify the node's current process.
	Name        string
	Incarnation uint64
	// Voter is true for a Raft voter, Leader for the consensus leader.
	Voter  bool
	Leader bool
	// Available is the node's effective availability for clock authority.
	Available bool
	// Revision is the runtime revision whose domain clocks the node
	// advertises as installed (0 when unknown).
	Revision uint64
}

// DomainAuthority is the clock authority of one paced domain.
type DomainAuthority struct {
	Domain     string
	Status     lifecycle.Status
	Generation uint64
	// Authority is the committed fence; an unassigned fence means the paced
	// clock is unavailable until an owner is committed.
	Authority lifecycle.AuthorityFence
}

// ClusterStatusSource returns the status SHOW CLUSTER STATUS shows.
type ClusterStatusSource func(ctx context.Context) (ClusterStatus, error)

// showClusterStatus is SHOW CLUSTER STATUS: one row per node, then one row
// per paced domain.
func (s *Session) showClusterStatus(ctx context.Context) (wire.Result, error) {
	var st ClusterStatus
	if s.cluster != nil {
		var err error
		if st, err = s.cluster(ctx); err != nil {
			return wire.Result{}, err
		}
	} else {
		st = s.embeddedClusterStatus()
	}
	return wire.Result{Set: ClusterStatusSet(st), Message: clusterMessage(st)}, nil
}

// embeddedClusterStatus is the status of an embedded node: itself alone.
func (s *Session) embeddedClusterStatus() ClusterStatus {
	id := s.node.Identity()
	_, rev, _ := s.node.Installed()
	st := ClusterStatus{Nodes: []ClusterNode{{
		Name: id.Node, Incarnation: id.Incarnation, Voter: true,
		Leader: s.node.IsLeader(), Available: true, Revision: rev,
	}}}
	for _, d := range s.node.Domains() {
		if d.Pace == lifecycle.Paced {
			st.Domains = append(st.Domains, DomainAuthority{Domain: d.Name, Status: d.Status, Generation: d.Generation, Authority: d.Authority})
		}
	}
	return st
}

func clusterMessage(st ClusterStatus) string {
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

func formatCount(n int) string { return FormatValue(wire.Uint(uint64(n))) }

// ClusterStatusSet renders st as SHOW CLUSTER STATUS's result set, with the
// columns kind ("node" or "domain"), name, incarnation, voter, leader,
// available, revision (a node's advertised revision, a domain's authority
// revision), authority (a domain's authority "node#incarnation", "unassigned"
// while none is committed), generation and status. Nodes are sorted by name,
// domains by name; columns that do not apply to a row are null.
func ClusterStatusSet(st ClusterStatus) *wire.ResultSet {
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
	}}
	nodes := append([]ClusterNode(nil), st.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		set.Rows = append(set.Rows, []wire.Value{
			wire.Text("node"), wire.Text(n.Name), wire.Uint(n.Incarnation), yesNo(n.Voter), yesNo(n.Leader),
			yesNo(n.Available), wire.Uint(n.Revision), wire.Null(), wire.Null(), wire.Null(),
		})
	}
	domains := append([]DomainAuthority(nil), st.Domains...)
	sort.Slice(domains, func(i, j int) bool { return domains[i].Domain < domains[j].Domain })
	for _, d := range domains {
		auth := "unassigned"
		if d.Authority.Assigned() {
			auth = d.Authority.Identity().String()
		}
		set.Rows = append(set.Rows, []wire.Value{
			wire.Text("domain"), wire.Text(d.Domain), wire.Null(), wire.Null(), wire.Null(), wire.Null(),
			wire.Uint(d.Authority.Revision), wire.Text(auth), wire.Uint(d.Generation), wire.Text(d.Status.String()),
		})
	}
	return set
}

func yesNo(b bool) wire.Value {
	if b {
		return wire.Text("yes")
	}
	return wire.Text("no")
}
