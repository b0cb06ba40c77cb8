package lifecycle

// Outcome is the result of one control-plane command that committed.
type Outcome struct {
	// Revision is the catalog revision after the command; the serving
	// node has installed it (or a later one) when the command returns.
	Revision uint64
	// Changed is false for a no-op: IF NOT EXISTS on an existing domain,
	// IF EXISTS on a missing one, setting the current placement, an empty
	// transaction.
	Changed bool
	// Domain is the domain's record after the command; zero after a DROP
	// (or a DROP IF EXISTS of a missing domain).
	Domain Domain
	// Unconfirmed names the live nodes that had not installed Revision
	// when the command's completion boundary ended (its deadline passed
	// first): the command is committed, but a statement through one of them
	// may see the previous state until it installs. Empty when every live
	// node installed it, and always on one embedded node.
	Unconfirmed []string
}
