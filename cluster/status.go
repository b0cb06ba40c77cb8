package cluster

import (
	"sync"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// ClusterStatus is what SHOW CLUSTER STATUS shows: the members as this
// node sees them and, for every paced domain, its authority.
type ClusterStatus struct {
	// Self is this member's node name.
	Self string
	// Leader is the leader's node name; empty while none is known.
	Leader string
	// CatalogRevision is this node's applied catalog revision;
	// AdvertisedRevision the runtime revision it advertises.
	CatalogRevision    uint64
	AdvertisedRevision uint64
	// Nodes are the registered nodes and the raft servers not (yet)
	// registered, sorted by name (unregistered servers, with an empty Name,
	// last).
	Nodes []NodeStatus
	// Domains are the domains, paced and unpaced, sorted by name.
	Domains []DomainStatus
	// Term is the consensus term this node is in.
	Term uint64
}

// NodeStatus is one member.
type NodeStatus struct {
	Name        string
	Incarnation uint64
	ServerID    string
	RaftAddr    string
	APIAddr     string
	// Voter is whether its raft server is a voter; Leader whether it is the
	// consensus leader; Available its effective availability as this node
	// sees it; Self whether it is this node.
	Voter     bool
	Leader    bool
	Available bool
	Self      bool
	// AdvertisedRevision is the runtime revision it advertised to this
	// node's latest probe (this node's own for Self); 0 when unknown.
	AdvertisedRevision uint64
	// Maintenance is the committed maintenance state (lifecycle.Maintenance):
	// "" in service, "cordoned", or "draining" while cordoned and still
	// owning a running clock.
	Maintenance string
}

// DomainStatus is one domain: its pace and, when paced, its authority.
type DomainStatus struct {
	Name string
	// Pace is the domain's pace; Period and Skew a paced domain's.
	Pace         lifecycle.Pace
	Period, Skew uint64
	Running      bool
	Generation   uint64
	// Authority is the committed authority fence: node, incarnation and
	// authority revision. Its Node is empty while unassigned (the paced
	// clock is then unavailable for execution).
	Authority lifecycle.AuthorityFence
	// Revision is the catalog revision that last changed the domain.
	Revision uint64
	// ClockFailure is the running generation's clock failure as this node
	// learned it from the authority (its own producer or a progress
	// report); nil while none.
	ClockFailure *wire.ClockFailure
}

// Status returns the cluster as this member sees it.
func (m *Member) Status() ClusterStatus {
	n := m.node
	s := n.CatalogState()
	st := ClusterStatus{Self: m.cfg.Node, CatalogRevision: s.Revision(), AdvertisedRevision: n.AdvertisedRevision(), Term: n.Term()}
	leader, _ := n.Leader()
	servers, _ := n.Servers()
	byID := make(map[string]catalog.Server, len(servers))
	for _, sv := range servers {
		byID[sv.ServerID] = sv
	}
	maintenance := lifecycle.Maintenance(s)
	m.statusMu.Lock()
	for _, nd := range s.Nodes() {
		ns := NodeStatus{Name: nd.Name, Incarnation: nd.Incarnation, ServerID: nd.RaftID, RaftAddr: nd.RaftAddr, APIAddr: nd.APIAddr,
			Leader: nd.RaftID != "" && nd.RaftID == leader.ServerID, Available: m.avail.Live(nd.NodeIncarnation()), Self: nd.Name == m.cfg.Node,
			Maintenance: maintenance[nd.Name]}
		if sv, ok := byID[nd.RaftID]; ok {
			ns.Voter = sv.Voter
			ns.RaftAddr = sv.RaftAddr
			delete(byID, nd.RaftID)
		}
		if ns.Self {
			ns.AdvertisedRevision = st.AdvertisedRevision
		} else if r, ok := m.statuses[nd.Name]; ok && r.healthy && r.status.Incarnation == nd.Incarnation {
			ns.AdvertisedRevision = r.status.AdvertisedRevision
		}
		if ns.Leader {
			st.Leader = nd.Name
		}
		st.Nodes = append(st.Nodes, ns)
	}
	m.statusMu.Unlock()
	for _, sv := range servers {
		if _, ok := byID[sv.ServerID]; ok {
			st.Nodes = append(st.Nodes, NodeStatus{ServerID: sv.ServerID, RaftAddr: sv.RaftAddr, Voter: sv.Voter, Leader: sv.ServerID == leader.ServerID})
		}
	}
	for _, d := range s.Domains() {
		ds := DomainStatus{Name: d.Name, Pace: d.Pace, Period: d.Period, Skew: d.Skew, Running: d.Running(), Generation: d.Generation, Authority: d.Authority, Revision: d.Revision}
		if f := n.ClockFailure(d.Name); f != nil && d.Running() && f.Generation == d.Generation {
			ds.ClockFailure = f
		}
		st.Domains = append(st.Domains, ds)
	}
	return st
}

// Wire returns st as SHOW CLUSTER STATUS shows it and a remote client
// receives it: the one place a member's view becomes wire's. A raft server
// that is not registered yet is named by its server ID; the revision shown
// is the one each node advertised.
func (st ClusterStatus) Wire() wire.ClusterStatus {
	out := wire.ClusterStatus{Term: st.Term}
	for _, n := range st.Nodes {
		name := n.Name
		if name == "" {
			name = n.ServerID // a raft server not registered yet
		}
		out.Nodes = append(out.Nodes, wire.ClusterNode{Name: name, Incarnation: n.Incarnation, Voter: n.Voter,
			Leader: n.Leader, Available: n.Available, Revision: n.AdvertisedRevision, Maintenance: n.Maintenance})
	}
	for _, d := range st.Domains {
		status := lifecycle.Stopped
		if d.Running {
			status = lifecycle.Running
		}
		wd := wire.NewClusterDomain(d.Name, status.String(), d.Generation, wire.ClusterAuthority(d.Authority), d.ClockFailure)
		wd.Pace, wd.Period, wd.Skew = d.Pace.String(), d.Period, d.Skew
		out.Domains = append(out.Domains, wd)
	}
	return out
}

// Metrics are the member's counters for /metrics.
type Metrics struct {
	// TicksProduced counts reports this node's producers emitted.
	TicksProduced uint64
	// ProgressSent and ProgressFailed count this node's delivery requests
	// that got a reply and that failed; ProgressAccepted, ProgressIgnored
	// and ProgressRefused count the reports this node received, by how it
	// evaluated them.
	ProgressSent, ProgressFailed                       uint64
	ProgressAccepted, ProgressIgnored, ProgressRefused uint64
	// ProgressImplausible counts received reports that matched the fence
	// but were refused as implausible (not in ProgressRefused).
	ProgressImplausible uint64
	// PeerForbidden counts interconnect requests refused because of who
	// sent them.
	PeerForbidden uint64
	// CommitLatency is the latency of the commands this node's
	// control-plane handler committed (locally or through the leader).
	CommitLatency Histogram
}

// Histogram is a latency histogram in Prometheus's shape: Counts[i] is the
// number of observations at most Bounds[i] (cumulative); Count and Sum
// cover every observation, including those above the last bound.
type Histogram struct {
	Bounds []time.Duration
	Counts []uint64
	Count  uint64
	Sum    time.Duration
}

// Metrics returns the member's counters.
func (m *Member) Metrics() Metrics {
	s := m.metrics.Snapshot()
	return Metrics{
		TicksProduced: m.ticks.Load(),
		ProgressSent:  s.ProgressSent, ProgressFailed: s.ProgressFailed,
		ProgressAccepted: s.ProgressAccepted, ProgressIgnored: s.ProgressIgnored, ProgressRefused: s.ProgressRefused,
		ProgressImplausible: s.ProgressImplausible, PeerForbidden: s.Forbidden,
		CommitLatency: m.commits.snapshot(),
	}
}

// commitBounds are the commit latency histogram's upper bounds.
var commitBounds = []time.Duration{
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond,
}

// latencyHistogram accumulates a Histogram over commitBounds.
type latencyHistogram struct {
	mu     sync.Mutex
	counts [11]uint64 // per bucket, not cumulative
	count  uint64
	sum    time.Duration
}

func (h *latencyHistogram) observe(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, b := range commitBounds {
		if d <= b {
			h.counts[i]++
			break
		}
	}
	h.count++
	h.sum += d
}

func (h *latencyHistogram) snapshot() Histogram {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := Histogram{Bounds: append([]time.Duration(nil), commitBounds...), Counts: make([]uint64, len(commitBounds)), Count: h.count, Sum: h.sum}
	var cum uint64
	for i := range commitBounds {
		cum += h.counts[i]
		out.Counts[i] = cum
	}
	return out
}
