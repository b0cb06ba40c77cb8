package grammar

// Statement is one parsed NSPL statement. Its Node spans the statement from
// its first keyword to its last token; the terminating ';' is not part of
// it. Literals in it are already converted and checked.
type Statement interface {
	// Pos returns the position of the statement's first character.
	Pos() Position
	// EndPos returns the position just past the statement's last token.
	EndPos() Position
	// Text returns the statement's source text, given the parsed source.
	Text(src string) string
	statement()
}

// Name is a domain name in its stored form: lower-cased and checked.
type Name struct {
	Node
	Value string
}

// Duration is a duration literal converted to unsigned nanoseconds.
type Duration struct {
	Node
	Nanos uint64
}

// Timestamp is an RFC 3339 string literal converted to signed Unix
// nanoseconds (UTC).
type Timestamp struct {
	Node
	UnixNanos int64
}

// Rate is a TIME RATE literal: a positive finite float64.
type Rate struct {
	Node
	Value float64
}

// Pace is the pacing keyword of a CREATE DOMAIN statement. The zero value is
// Unpaced, which is also what the short spelling CREATE DOMAIN means. The
// planner converts it to the replicated vocabulary; the grammar keeps its
// own so that it imports nothing of this module.
type Pace uint8

const (
	// Unpaced is UNPACED (or the short spelling CREATE DOMAIN).
	Unpaced Pace = iota
	// Paced is PACED.
	Paced
)

// Placement is a placement policy keyword written after PLACEMENT. The zero
// value is Neutral, which is also what an omitted PLACEMENT clause means.
type Placement uint8

const (
	// Neutral is NEUTRAL.
	Neutral Placement = iota
	// RequireColocation is REQUIRE COLOCATION.
	RequireColocation
	// PreferColocation is PREFER COLOCATION.
	PreferColocation
	// SuggestSeparation is SUGGEST SEPARATION.
	SuggestSeparation
)

// PlacementPolicy is a placement policy written after PLACEMENT.
type PlacementPolicy struct {
	Node
	Policy Placement
}

// CreateDomain is CREATE [IF NOT EXISTS] {PACED|UNPACED|} DOMAIN. Period and
// Skew are set exactly when Pace is Paced; Placement is nil when the clause
// is omitted (which means NEUTRAL).
type CreateDomain struct {
	Node
	IfNotExists bool
	Pace        Pace
	// Short is true for the spelling CREATE DOMAIN (short for UNPACED).
	Short     bool
	Name      Name
	Period    *Duration
	Skew      *Duration
	Placement *PlacementPolicy
}

// AlterPlacement is ALTER DOMAIN SET PLACEMENT <policy>, which applies to
// the session's active domain.
type AlterPlacement struct {
	Node
	Placement PlacementPolicy
}

// Start is START, START AT NOW or START AT '<timestamp>', with an optional
// TIME RATE. Now and At are both unset for a plain START (resume).
type Start struct {
	Node
	Now  bool
	At   *Timestamp
	Rate *Rate
}

// Stop is STOP.
type Stop struct{ Node }

// AttachClock is ATTACH DOMAIN CLOCK.
type AttachClock struct{ Node }

// DetachClock is DETACH DOMAIN CLOCK.
type DetachClock struct{ Node }

// Use is USE <name>.
type Use struct {
	Node
	Name Name
}

// ListDomains is LIST DOMAINS [LIKE '<pattern>']; Like is nil without the
// clause.
type ListDomains struct {
	Node
	Like *Pattern
}

// Pattern is a LIKE pattern: a string literal, unquoted and lower-cased
// (ParseLikePattern).
type Pattern struct {
	Node
	Value string
}

// DescribeDomain is DESCRIBE DOMAIN [<name>]; Name is nil for the active
// domain.
type DescribeDomain struct {
	Node
	Name *Name
}

// DropDomain is DROP DOMAIN [IF EXISTS] <name>.
type DropDomain struct {
	Node
	IfExists bool
	Name     Name
}

// Begin is BEGIN.
type Begin struct{ Node }

// Commit is COMMIT.
type Commit struct{ Node }

// Rollback is REVERT, also spelled ROLLBACK; Keyword holds the spelling used.
type Rollback struct {
	Node
	Keyword string
}

// Path is a backup file path: a string literal, unquoted. A leading "~/"
// is kept as written; expanding it is the executor's business.
type Path struct {
	Node
	Value string
}

// Backup is BACKUP CLUSTER TO '<path>' or BACKUP DOMAIN [<name>] TO
// '<path>'; Name is nil for the active domain and always nil for CLUSTER.
type Backup struct {
	Node
	Cluster bool
	Name    *Name
	Path    Path
}

// Restore is RESTORE CLUSTER FROM '<path>' [RESUME] [DRY RUN] or RESTORE
// DOMAIN <name> [AS <new_name>] FROM '<path>' [RESUME] [DRY RUN]. Name and
// As are nil for CLUSTER; As is nil when the clause is omitted.
type Restore struct {
	Node
	Cluster bool
	Name    *Name
	As      *Name
	Path    Path
	Resume  bool
	DryRun  bool
}

// DescribeBackup is DESCRIBE BACKUP '<path>'.
type DescribeBackup struct {
	Node
	Path Path
}

// ShowClusterStatus is SHOW CLUSTER STATUS [LIKE '<pattern>']; Like, nil
// without the clause, selects the domain rows by name.
type ShowClusterStatus struct {
	Node
	Like *Pattern
}

// NodeName is a cluster node's name as written after NODE, unquoted and
// with its case kept: node names are case-sensitive.
type NodeName struct {
	Node
	Value string
}

// NodeMaintenance is CORDON NODE <name>, UNCORDON NODE <name> or DRAIN
// NODE <name>; Action is the statement's keyword in upper case.
type NodeMaintenance struct {
	Node
	Action string
	Name   NodeName
}

// ShowTransactions is SHOW TRANSACTIONS, or with All SHOW ALL
// TRANSACTIONS.
type ShowTransactions struct {
	Node
	All bool
}

// DescribeTransaction is DESCRIBE TRANSACTION.
type DescribeTransaction struct{ Node }

func (*CreateDomain) statement()        {}
func (*AlterPlacement) statement()      {}
func (*Start) statement()               {}
func (*Stop) statement()                {}
func (*AttachClock) statement()         {}
func (*DetachClock) statement()         {}
func (*Use) statement()                 {}
func (*ListDomains) statement()         {}
func (*DescribeDomain) statement()      {}
func (*DropDomain) statement()          {}
func (*Begin) statement()               {}
func (*Commit) statement()              {}
func (*Rollback) statement()            {}
func (*Backup) statement()              {}
func (*Restore) statement()             {}
func (*DescribeBackup) statement()      {}
func (*ShowClusterStatus) statement()   {}
func (*ShowTransactions) statement()    {}
func (*DescribeTransaction) statement() {}
func (*NodeMaintenance) statement()     {}
