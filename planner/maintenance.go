package planner

import "github.com/nspl-dev/nspl/grammar"

// MaintenanceAction is what a node maintenance statement does.
type MaintenanceAction string

// The node maintenance actions: their statement keywords.
const (
	Cordon   MaintenanceAction = "CORDON"
	Uncordon MaintenanceAction = "UNCORDON"
	Drain    MaintenanceAction = "DRAIN"
)

// NodeMaintenance is CORDON NODE, UNCORDON NODE or DRAIN NODE of the named
// cluster node. It is cluster administration, never queued in a
// transaction.
type NodeMaintenance struct {
	Located
	Action MaintenanceAction
	Node   string
}

func (NodeMaintenance) plan() {}

// String returns canonical NSPL, e.g. "DRAIN NODE `node-a`;".
func (p NodeMaintenance) String() string {
	return string(p.Action) + " NODE " + grammar.FormatNodeName(p.Node) + ";"
}
