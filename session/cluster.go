package session

import (
	"context"
	"sort"

	"github.com/nspl-dev/nspl/lifecycle"
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
func (s *Session) showClusterStatus(ctx context.Context) (Result, error) {
	var st ClusterStatus
	if s.cluster != nil {
		var err error
		if st, err = s.cluster(ctx); err != nil {
			return Result{}, err
		}
	} else {
		st = s.embeddedClusterStatus()
	}
	return Result{Set: ClusterStatusSet(st), Message: clusterMessage(st)}, nil
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

func formatCount(n int) string { return FormatValue(Uint(uint64(n))) }

// ClusterStatusSet renders st as SHOW CLUSTER STATUS's result set, with the
// columns kind ("node" or "domain"), name, incarnation, voter, leader,
// available, revision (a node's advertised revision, a domain's authority
// revision), authority (a domain's authority "node#incarnation", "unassigned"
// while none is committed), generation and status. Nodes are sorted by name,
// domains by name; columns that do not apply to a row are null.
func ClusterStatusSet(st ClusterStatus) *ResultSet {
	set := &ResultSet{Columns: []Column{
		{Name: "kind", Type: KindText},
		{Name: "name", Type: KindText},
		{Name: "incarnation", Type: KindUint},
		{Name: "voter", Type: KindText},
		{Name: "leader", Type: KindText},
		{Name: "available", Type: KindText},
		{Name: "revision", Type: KindUint},
		{Name: "authority", Type: KindText},
		{Name: "generation", Type: KindUint},
		{Name: "status", Type: KindText},
	}}
	nodes := append([]ClusterNode(nil), st.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		set.Rows = append(set.Rows, []Value{
			Text("node"), Text(n.Name), Uint(n.Incarnation), yesNo(n.Voter), yesNo(n.Leader),
			yesNo(n.Available), Uint(n.Revision), Null(), Null(), Null(),
		})
	}
	domains := append([]DomainAuthority(nil), st.Domains...)
	sort.Slice(domains, func(i, j int) bool { return domains[i].Domain < domains[j].Domain })
	for _, d := range domains {
		auth := "unassigned"
		if d.Authority.Assigned() {
			auth = d.Authority.Identity().String()
		}
		set.Rows = append(set.Rows, []Value{
			Text("domain"), Text(d.Domain), Null(), Null(), Null(), Null(),
			Uint(d.Authority.Revision), Text(auth), Uint(d.Generation), Text(d.Status.String()),
		})
	}
	return set
}

func yesNo(b bool) Value {
	if b {
		return Text("yes")
	}
	return Text("no")
}
