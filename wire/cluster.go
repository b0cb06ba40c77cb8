package wire

// ClusterStatus is what SHOW CLUSTER STATUS shows: the cluster's nodes as
// the serving node sees them and, per paced domain, its clock authority. Its
// rows hold plain values; session renders them as the statement's result set.
type ClusterStatus struct {
	Nodes   []ClusterNode
	Domains []ClusterDomain
	// Term is the consensus term the serving node is in; 0 when unknown.
	Term uint64
}

// ClusterNode is one node as the serving node sees it.
type ClusterNode struct {
	// Name and Incarnation identify the node's current process. A raft
	// server that has not registered yet is named by its server ID.
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
	// Maintenance is "" for a node in service, "cordoned" for a cordoned
	// node, "draining" for a cordoned node that still owns a running clock.
	Maintenance string
}

// ClusterDomain is the clock authority of one paced domain.
type ClusterDomain struct {
	Name string
	// Status is the domain's lifecycle status word ("running", "stopped").
	Status     string
	Generation uint64
	// Authority is the committed authority fence.
	Authority ClusterAuthority
	// ClockFailure is the full typed report of the running generation's
	// clock failure at its authority, as the serving node learned it;
	// empty while none.
	ClockFailure string
	// Pace is "PACED" or "UNPACED"; Period and Skew are a paced domain's,
	// in nanoseconds, 0 for an unpaced one.
	Pace         string
	Period, Skew uint64
}

// NewClusterDomain returns one paced domain's row of SHOW CLUSTER STATUS:
// the one place a domain's status word, authority fence and clock failure
// (nil when none) become these plain values, for an embedded node and a
// cluster member alike. status is the lifecycle status word
// (lifecycle.Status's String); a lifecycle.AuthorityFence converts to
// ClusterAuthority directly, their fields being the same. It lives here,
// in the vocabulary both the session and the cluster already speak, so
// that neither has to import the other for it.
func NewClusterDomain(name, status string, generation uint64, authority ClusterAuthority, failure *ClockFailure) ClusterDomain {
	d := ClusterDomain{Name: name, Status: status, Generation: generation, Authority: authority}
	if failure != nil {
		d.ClockFailure = failure.Message
	}
	return d
}

// ClusterAuthority is a paced domain's committed authority fence: the node
// incarnation allowed to produce its ticks and the revision that assigned
// it. Node is empty while unassigned; the paced clock is then unavailable
// until an owner is committed.
type ClusterAuthority struct {
	Node        string
	Incarnation uint64
	Revision    uint64
}
