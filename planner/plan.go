package planner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/record"
)

// Sentinel errors of checks that need no state. They reach callers inside a
// *grammar.Error, which carries the position.
var (
	// ErrNonPositivePeriod reports a paced domain whose PERIOD is zero. It
	// is lifecycle's ErrInvalidPeriod (record.ErrInvalidPeriod), the
	// refusal the catalog gives the same CREATE, so a zero PERIOD is one
	// failure whether the planner or the catalog finds it, and travels
	// under that sentinel's code.
	ErrNonPositivePeriod = record.ErrInvalidPeriod
	// ErrUnknownStatement reports a grammar.Statement the planner does not
	// know, which is a bug in whoever built it.
	ErrUnknownStatement = errors.New("unknown statement")
)

// Plan is one statement as plain data: no parser types, literals converted,
// stateless checks done. String prints it as canonical NSPL, and parsing
// that text plans to an equal value (positions aside).
type Plan interface {
	// Pos returns the position of the statement the plan came from.
	Pos() grammar.Position
	// String returns the canonical NSPL text, ';' included.
	String() string
	plan()
}

// Located holds the position of a plan's statement; every plan embeds it.
// Positions are where a plan came from, not what it means: two plans that
// differ only in position are the same plan.
type Located struct {
	Position grammar.Position
}

// Pos returns the statement's position.
func (l Located) Pos() grammar.Position { return l.Position }

// StartMode says how START picks its start point.
type StartMode uint8

const (
	// StartResume is START;: resume from persisted domain state.
	StartResume StartMode = iota
	// StartAtNow is START AT NOW: sample the wall clock once.
	StartAtNow
	// StartAtTime is START AT '<timestamp>': start at the given instant.
	StartAtTime
)

// String returns the mode's name.
func (m StartMode) String() string {
	switch m {
	case StartResume:
		return "resume"
	case StartAtNow:
		return "at-now"
	case StartAtTime:
		return "at-time"
	default:
		return fmt.Sprintf("StartMode(%d)", uint8(m))
	}
}

// DefaultRate is the TIME RATE of a START without the clause.
const DefaultRate = 1.0

// CreateDomain creates a domain. Period and Skew are zero for an unpaced
// domain; a paced domain's Period is positive.
type CreateDomain struct {
	Located
	Name        string
	Pace        record.Pace
	Period      uint64
	Skew        uint64
	Placement   record.Placement
	IfNotExists bool
}

// AlterPlacement changes the active domain's placement default.
type AlterPlacement struct {
	Located
	Placement record.Placement
}

// Start starts the active domain. At is the start instant in Unix
// nanoseconds for StartAtTime and zero otherwise; Rate is the TIME RATE,
// DefaultRate when the statement has no TIME RATE clause (START; has none:
// the lifecycle's resume rule decides what a resume keeps).
type Start struct {
	Located
	Mode StartMode
	At   int64
	Rate float64
}

// Stop stops the active domain.
type Stop struct{ Located }

// Attach follows the active domain's clock.
type Attach struct{ Located }

// Detach stops following the active domain's clock.
type Detach struct{ Located }

// Use makes Name the session's active domain.
type Use struct {
	Located
	Name string
}

// ListDomains lists every domain, or with Like set those whose name
// matches it (a stored pattern, grammar.ParseLikePattern).
type ListDomains struct {
	Located
	Like string
}

// DescribeDomain describes Name, or the active domain when Name is "".
type DescribeDomain struct {
	Located
	Name string
}

// DropDomain drops Name.
type DropDomain struct {
	Located
	Name     string
	IfExists bool
}

// Begin opens a transaction.
type Begin struct{ Located }

// Commit commits the open transaction.
type Commit struct{ Located }

// Rollback discards the open transaction (REVERT, also spelled ROLLBACK).
type Rollback struct{ Located }

// ShowClusterStatus shows the cluster's nodes and, per paced domain, its
// clock authority; with Like set only the domains whose name matches it (a
// stored pattern, grammar.ParseLikePattern).
type ShowClusterStatus struct {
	Located
	Like string
}

// ShowTransactions shows the session's open transaction: its domain, its
// queued steps and bytes, and how long it has been open and idle. With All
// (SHOW ALL TRANSACTIONS) it shows the open transaction of every session of
// the serving node, and those it holds for clients that lost their session.
type ShowTransactions struct {
	Located
	All bool
}

func (CreateDomain) plan()      {}
func (AlterPlacement) plan()    {}
func (Start) plan()             {}
func (Stop) plan()              {}
func (Attach) plan()            {}
func (Detach) plan()            {}
func (Use) plan()               {}
func (ListDomains) plan()       {}
func (DescribeDomain) plan()    {}
func (DropDomain) plan()        {}
func (Begin) plan()             {}
func (Commit) plan()            {}
func (Rollback) plan()          {}
func (ShowClusterStatus) plan() {}
func (ShowTransactions) plan()  {}

// String returns "SHOW CLUSTER STATUS;" or "SHOW CLUSTER STATUS LIKE '…';".
func (p ShowClusterStatus) String() string {
	if p.Like == "" {
		return "SHOW CLUSTER STATUS;"
	}
	return "SHOW CLUSTER STATUS LIKE " + grammar.FormatLikePattern(p.Like) + ";"
}

// String returns "SHOW TRANSACTIONS;" or "SHOW ALL TRANSACTIONS;".
func (p ShowTransactions) String() string {
	if p.All {
		return "SHOW ALL TRANSACTIONS;"
	}
	return "SHOW TRANSACTIONS;"
}

// DescribeTransaction shows the session's open transaction step by step:
// each queued statement in order, with the transaction's domain, size,
// age and limits in the message.
type DescribeTransaction struct{ Located }

func (DescribeTransaction) plan() {}

// String returns "DESCRIBE TRANSACTION;".
func (DescribeTransaction) String() string { return "DESCRIBE TRANSACTION;" }

// String returns canonical NSPL, for example
// "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms PLACEMENT NEUTRAL;".
func (p CreateDomain) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if p.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(p.Pace.String())
	b.WriteString(" DOMAIN ")
	b.WriteString(grammar.FormatName(p.Name))
	if p.Pace == record.Paced {
		b.WriteString(" WITH PERIOD ")
		b.WriteString(grammar.FormatDuration(p.Period))
		b.WriteString(" SKEW ")
		b.WriteString(grammar.FormatDuration(p.Skew))
	}
	b.WriteString(" PLACEMENT ")
	b.WriteString(p.Placement.String())
	b.WriteByte(';')
	return b.String()
}

// String returns canonical NSPL.
func (p AlterPlacement) String() string {
	return "ALTER DOMAIN SET PLACEMENT " + p.Placement.String() + ";"
}

// String returns canonical NSPL: "START;", "START AT NOW TIME RATE 1;" or
// "START AT '2026-01-01T00:00:00Z' TIME RATE 60;".
func (p Start) String() string {
	switch p.Mode {
	case StartAtNow:
		return "START AT NOW TIME RATE " + grammar.FormatRate(p.Rate) + ";"
	case StartAtTime:
		return "START AT '" + grammar.FormatTimestamp(p.At) + "' TIME RATE " + grammar.FormatRate(p.Rate) + ";"
	default:
		return "START;"
	}
}

// String returns canonical NSPL.
func (Stop) String() string { return "STOP;" }

// String returns canonical NSPL.
func (Attach) String() string { return "ATTACH DOMAIN CLOCK;" }

// String returns canonical NSPL.
func (Detach) String() string { return "DETACH DOMAIN CLOCK;" }

// String returns canonical NSPL.
func (p Use) String() string { return "USE " + grammar.FormatName(p.Name) + ";" }

// String returns canonical NSPL.
func (p ListDomains) String() string {
	if p.Like == "" {
		return "LIST DOMAINS;"
	}
	return "LIST DOMAINS LIKE " + grammar.FormatLikePattern(p.Like) + ";"
}

// String returns canonical NSPL.
func (p DescribeDomain) String() string {
	if p.Name == "" {
		return "DESCRIBE DOMAIN;"
	}
	return "DESCRIBE DOMAIN " + grammar.FormatName(p.Name) + ";"
}

// String returns canonical NSPL.
func (p DropDomain) String() string {
	if p.IfExists {
		return "DROP DOMAIN IF EXISTS " + grammar.FormatName(p.Name) + ";"
	}
	return "DROP DOMAIN " + grammar.FormatName(p.Name) + ";"
}

// String returns canonical NSPL.
func (Begin) String() string { return "BEGIN;" }

// String returns canonical NSPL.
func (Commit) String() string { return "COMMIT;" }

// String returns canonical NSPL; REVERT is the canonical spelling.
func (Rollback) String() string { return "REVERT;" }
