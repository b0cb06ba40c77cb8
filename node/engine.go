package node

// IsLeader reports whether this node leads the catalog now: what SHOW
// CLUSTER STATUS shows for an embedded node.
func (n *Node) IsLeader() bool { return n.catalog.IsLeader() }
