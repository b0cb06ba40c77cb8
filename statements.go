package nspl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/record"
)

// Statement is one NSPL statement built from Go values: a domain name as a
// string, instants as time.Time, periods and skews as time.Duration, a TIME
// RATE as a float64. Session.Exec runs the plans they hold; Script prints
// them for Follower.ExecText, whose remote side parses the text.
//
// A builder never takes statement text, so a caller never quotes or
// concatenates: String prints the statement through the planner's
// canonical printer, which quotes a name that needs it (`prod-1`, `clock`)
// and writes instants, durations and rates as the grammar reads them back
// exactly. A value no statement can hold (an invalid name, an instant
// outside years 1677 to 2262, a negative duration, a rate that is not
// positive and finite, an empty backup path, an invalid LIKE pattern) is
// kept as the statement's error and reported when it is run or printed,
// matching ErrInvalidName, ErrInvalidTimestamp, ErrInvalidDuration,
// ErrInvalidRate, ErrInvalidPath or ErrInvalidPattern.
//
// Builders are values: each method returns a changed copy, so one builder
// can be the start of several statements.
type Statement interface {
	// String returns the statement as canonical NSPL text, ';' included,
	// or "" when the statement holds an error.
	String() string
	// Err returns the error of a value the statement cannot hold, or nil.
	Err() error
}

// Script returns the canonical text of stmts, one statement a line, for a
// Follower's ExecText: statement i is on line i+1, so a positioned error's
// Error.Pos.Line names the statement that failed. It returns the first
// statement's error, as a *Error on that statement's line.
func Script(stmts ...Statement) (string, error) {
	var b strings.Builder
	for i, st := range stmts {
		if err := st.Err(); err != nil {
			return "", statementError(i, err)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(st.String())
	}
	return b.String(), nil
}

// statementError is the positioned error of statement i holding err.
func statementError(i int, err error) *Error {
	kind := err
	if e, ok := err.(*buildError); ok {
		kind = e.kind
	}
	return &Error{Pos: Position{Line: i + 1, Column: 1}, Msg: err.Error(), Kind: kind}
}

// buildError is a builder's refusal of a value: kind is the grammar's
// sentinel for it.
type buildError struct {
	kind error
	msg  string
}

func (e *buildError) Error() string { return e.msg }
func (e *buildError) Unwrap() error { return e.kind }

// plain is a statement that is its plan.
type plain struct {
	p   planner.Plan
	err error
}

func (s plain) String() string {
	if s.err != nil {
		return ""
	}
	return s.p.String()
}

func (s plain) Err() error { return s.err }

func (s plain) plan() planner.Plan { return s.p }

// planned is a statement that holds its plan, as every builder of this
// package does: Exec runs that plan and never prints it to parse it again.
type planned interface{ plan() planner.Plan }

// execStatement runs stmts[i] for Exec. A statement of this package runs
// its plan; one implemented elsewhere has no plan but its text, which is
// parsed and run as ExecText runs text. A failure is positioned on line
// i+1, as Script lays the statements out.
func (s *Session) execStatement(ctx context.Context, i int, st Statement) ([]Result, error) {
	if err := st.Err(); err != nil {
		return nil, statementError(i, err)
	}
	line := grammar.StatementSource{Start: Position{Line: i + 1, Column: 1}}
	ps, ok := st.(planned)
	if !ok {
		results, err := s.ExecText(ctx, st.String())
		var ge *Error
		if errors.As(err, &ge) {
			err = &Error{Pos: line.Locate(ge.Pos), Msg: ge.Msg, Kind: ge.Kind}
		}
		return results, err
	}
	r, err := s.exec(ctx, ps.plan())
	var ge *Error
	if errors.As(err, &ge) {
		// The session positions a failure at the plan's position, which a
		// plan built from Go values does not have.
		err = &Error{Pos: line.Start, Msg: ge.Msg, Kind: ge.Kind}
	}
	if err != nil {
		return nil, err
	}
	return []Result{r}, nil
}

// name converts a domain name as a caller gives it (any case, bare or
// backtick-quoted) to the stored form.
func name(n string) (string, error) {
	stored, err := grammar.ParseName(n)
	if err != nil {
		return "", &buildError{kind: grammar.ErrInvalidName, msg: err.Error()}
	}
	return stored, nil
}

// Use makes domain the session's active domain: USE domain;.
func Use(domain string) Statement {
	n, err := name(domain)
	return plain{p: planner.Use{Name: n}, err: err}
}

// Stop stops the active domain: STOP;.
func Stop() Statement { return plain{p: planner.Stop{}} }

// Attach follows the active domain's clock: ATTACH DOMAIN CLOCK;.
func Attach() Statement { return plain{p: planner.Attach{}} }

// Detach stops following the active domain's clock: DETACH DOMAIN CLOCK;.
func Detach() Statement { return plain{p: planner.Detach{}} }

// ListDomains lists every domain: LIST DOMAINS;.
func ListDomains() Statement { return plain{p: planner.ListDomains{}} }

// ListDomainsLike lists the domains whose name matches pattern, SQL LIKE's
// '%' (any run) and '_' (any one character), '\' escaping either: LIST
// DOMAINS LIKE 'pattern';. A pattern no domain name could match is
// ErrInvalidPattern.
func ListDomainsLike(pattern string) Statement {
	p, err := grammar.ParseLikePattern(pattern)
	if err != nil {
		return plain{err: &buildError{kind: grammar.ErrInvalidPattern, msg: err.Error()}}
	}
	return plain{p: planner.ListDomains{Like: p}}
}

// Describe describes domain, or the active domain when domain is "":
// DESCRIBE DOMAIN [domain];.
func Describe(domain string) Statement {
	if domain == "" {
		return plain{p: planner.DescribeDomain{}}
	}
	n, err := name(domain)
	return plain{p: planner.DescribeDomain{Name: n}, err: err}
}

// Begin opens a transaction: BEGIN;.
func Begin() Statement { return plain{p: planner.Begin{}} }

// Commit commits the open transaction: COMMIT;.
func Commit() Statement { return plain{p: planner.Commit{}} }

// Revert discards the open transaction: REVERT;.
func Revert() Statement { return plain{p: planner.Rollback{}} }

// DropStatement is DROP DOMAIN, built by Drop.
type DropStatement struct{ plain }

// Drop drops domain: DROP DOMAIN domain;.
func Drop(domain string) DropStatement {
	n, err := name(domain)
	return DropStatement{plain{p: planner.DropDomain{Name: n}, err: err}}
}

// IfExists makes dropping a domain that does not exist succeed.
func (s DropStatement) IfExists() DropStatement {
	p := s.p.(planner.DropDomain)
	p.IfExists = true
	s.p = p
	return s
}

// CreateStatement is CREATE DOMAIN, built by Create and CreatePaced.
type CreateStatement struct{ plain }

// Create creates an unpaced domain, whose logical time is UTC: CREATE
// DOMAIN domain;.
func Create(domain string) CreateStatement {
	n, err := name(domain)
	return CreateStatement{plain{p: planner.CreateDomain{Name: n}, err: err}}
}

// CreatePaced creates a paced domain that ticks every period of logical
// time and admits timestamps within skew of a tick: CREATE PACED DOMAIN
// domain WITH PERIOD period SKEW skew;. A negative period or skew is the
// statement's error; a zero period is refused when it runs
// (ErrInvalidPeriod).
func CreatePaced(domain string, period, skew time.Duration) CreateStatement {
	n, err := name(domain)
	p := planner.CreateDomain{Name: n, Pace: lifecycle.Paced}
	for _, d := range []struct {
		what string
		v    time.Duration
	}{{"period", period}, {"skew", skew}} {
		if d.v < 0 && err == nil {
			err = &buildError{kind: grammar.ErrInvalidDuration, msg: fmt.Sprintf("%s %s is negative; give a duration of 0 or more", d.what, d.v)}
		}
	}
	p.Period, p.Skew = uint64(max(period, 0)), uint64(max(skew, 0))
	return CreateStatement{plain{p: p, err: err}}
}

// IfNotExists makes creating a domain that already exists succeed,
// leaving it unchanged.
func (s CreateStatement) IfNotExists() CreateStatement {
	p := s.p.(planner.CreateDomain)
	p.IfNotExists = true
	s.p = p
	return s
}

// StartStatement is START, built by Start.
type StartStatement struct{ plain }

// Start starts the active domain, resuming from its persisted state:
// START;. At and AtNow choose a new start instant, Rate the TIME RATE.
func Start() StartStatement {
	return StartStatement{plain{p: planner.Start{Mode: planner.StartResume, Rate: planner.DefaultRate}}}
}

// At starts the domain's logical time at t: START AT 't'. An instant
// outside years 1677 to 2262 is the statement's error.
func (s StartStatement) At(t time.Time) StartStatement {
	p := s.p.(planner.Start)
	if t.Before(minInstant) || t.After(maxInstant) {
		s.setErr(&buildError{kind: grammar.ErrInvalidTimestamp,
			msg: fmt.Sprintf("START AT %s is outside the signed Unix-nanosecond range (years 1677 to 2262); give an instant inside it", t.UTC().Format(time.RFC3339Nano))})
		return s
	}
	p.Mode, p.At = planner.StartAtTime, t.UnixNano()
	s.p = p
	return s
}

// AtNow starts the domain's logical time at the engine's UTC when the
// statement commits: START AT NOW.
func (s StartStatement) AtNow() StartStatement {
	p := s.p.(planner.Start)
	p.Mode, p.At = planner.StartAtNow, 0
	s.p = p
	return s
}

// Rate sets the TIME RATE, logical nanoseconds per UTC nanosecond: TIME
// RATE rate. Without At or AtNow it starts at NOW, since a resume keeps the
// persisted rate. A rate that is not positive and finite is the
// statement's error.
func (s StartStatement) Rate(rate float64) StartStatement {
	p := s.p.(planner.Start)
	if !(rate > 0) || math.IsInf(rate, 0) {
		s.setErr(&buildError{kind: grammar.ErrInvalidRate, msg: fmt.Sprintf("TIME RATE %v is not a positive finite number; give a rate such as 1 or 0.5", rate)})
		return s
	}
	if p.Mode == planner.StartResume {
		p.Mode = planner.StartAtNow
	}
	p.Rate = rate
	s.p = p
	return s
}

func (s *StartStatement) setErr(err error) {
	if s.err == nil {
		s.err = err
	}
}

var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// Placement is a domain's fallback placement policy, the PLACEMENT clause
// of CREATE DOMAIN and ALTER DOMAIN SET PLACEMENT. The zero value is
// PlacementNeutral, which an omitted clause means.
type Placement = record.Placement

// Placement policies.
const (
	// PlacementNeutral: PLACEMENT NEUTRAL, ordinary scheduling.
	PlacementNeutral = record.Neutral
	// PlacementRequireColocation: PLACEMENT REQUIRE COLOCATION.
	PlacementRequireColocation = record.RequireColocation
	// PlacementPreferColocation: PLACEMENT PREFER COLOCATION.
	PlacementPreferColocation = record.PreferColocation
	// PlacementSuggestSeparation: PLACEMENT SUGGEST SEPARATION.
	PlacementSuggestSeparation = record.SuggestSeparation
)

// placementErr is the error of a Placement no statement can hold.
func placementErr(p Placement) error {
	switch p {
	case record.Neutral, record.RequireColocation, record.PreferColocation, record.SuggestSeparation:
		return nil
	}
	return &buildError{kind: grammar.ErrSyntax, msg: fmt.Sprintf("placement %s is not a policy; give PlacementNeutral, PlacementRequireColocation, PlacementPreferColocation or PlacementSuggestSeparation", p)}
}

// Placement sets the domain's placement policy: PLACEMENT policy. A
// value that is none of the Placement constants is the statement's error
// (ErrSyntax, as the text would be).
func (s CreateStatement) Placement(policy Placement) CreateStatement {
	p := s.p.(planner.CreateDomain)
	if err := placementErr(policy); err != nil {
		if s.err == nil {
			s.err = err
		}
		return s
	}
	p.Placement = policy
	s.p = p
	return s
}

// AlterPlacement changes the active domain's placement policy: ALTER
// DOMAIN SET PLACEMENT policy;. A value that is none of the Placement
// constants is the statement's error (ErrSyntax).
func AlterPlacement(policy Placement) Statement {
	return plain{p: planner.AlterPlacement{Placement: policy}, err: placementErr(policy)}
}

// ShowClusterStatus shows the cluster's nodes and each paced domain's
// clock authority: SHOW CLUSTER STATUS;.
func ShowClusterStatus() Statement { return plain{p: planner.ShowClusterStatus{}} }

// ShowClusterStatusLike is ShowClusterStatus with only the domain rows
// whose name matches pattern, as ListDomainsLike matches: SHOW CLUSTER
// STATUS LIKE 'pattern';. A pattern no domain name could match is
// ErrInvalidPattern.
func ShowClusterStatusLike(pattern string) Statement {
	p, err := grammar.ParseLikePattern(pattern)
	if err != nil {
		return plain{err: &buildError{kind: grammar.ErrInvalidPattern, msg: err.Error()}}
	}
	return plain{p: planner.ShowClusterStatus{Like: p}}
}

// ShowTransactions shows the session's open transaction: SHOW
// TRANSACTIONS;.
func ShowTransactions() Statement { return plain{p: planner.ShowTransactions{}} }

// ShowAllTransactions shows the open transaction of every session of the
// node, and those it holds for clients that lost their session: SHOW ALL
// TRANSACTIONS;.
func ShowAllTransactions() Statement { return plain{p: planner.ShowTransactions{All: true}} }

// DescribeTransaction shows the session's open transaction step by step:
// DESCRIBE TRANSACTION;.
func DescribeTransaction() Statement { return plain{p: planner.DescribeTransaction{}} }

// CordonNode gives the cluster node name no new clock authority: CORDON
// NODE name;. A name that is not a node name (1 to 63 letters, digits and
// '-', neither first nor last) is ErrInvalidName.
func CordonNode(name string) Statement { return nodeMaintenance(planner.Cordon, name) }

// UncordonNode lets the cluster node name take clock authorities again:
// UNCORDON NODE name;.
func UncordonNode(name string) Statement { return nodeMaintenance(planner.Uncordon, name) }

// DrainNode cordons the cluster node name and moves its clock authorities
// to other nodes, one at a time: DRAIN NODE name;.
func DrainNode(name string) Statement { return nodeMaintenance(planner.Drain, name) }

func nodeMaintenance(action planner.MaintenanceAction, name string) Statement {
	v, err := grammar.ParseNodeName(grammar.FormatNodeName(name))
	if err != nil {
		return plain{err: &buildError{kind: grammar.ErrInvalidName, msg: err.Error()}}
	}
	return plain{p: planner.NodeMaintenance{Action: action, Node: v}}
}

// path checks a backup file path as the grammar reads its literal: any
// text but an empty one or one holding a NUL byte. "~/" is kept, and
// expanded when the statement runs.
func path(p string) (string, error) {
	v, err := grammar.ParsePath(p)
	if err != nil {
		return "", &buildError{kind: grammar.ErrInvalidPath, msg: err.Error()}
	}
	return v, nil
}

// BackupCluster writes an archive of every domain to the file at path:
// BACKUP CLUSTER TO 'path';. An empty path, or one holding a NUL byte, is
// ErrInvalidPath.
func BackupCluster(file string) Statement {
	p, err := path(file)
	return plain{p: planner.Backup{Cluster: true, Path: p}, err: err}
}

// BackupDomain writes an archive of domain, or of the active domain when
// domain is "", to the file at path: BACKUP DOMAIN [domain] TO 'path';.
func BackupDomain(domain, file string) Statement {
	b := planner.Backup{}
	var err error
	if domain != "" {
		b.Domain, err = name(domain)
	}
	p, perr := path(file)
	b.Path = p
	if err == nil {
		err = perr
	}
	return plain{p: b, err: err}
}

// DescribeBackup reads, verifies and describes the archive at path without
// touching the catalog: DESCRIBE BACKUP 'path';.
func DescribeBackup(file string) Statement {
	p, err := path(file)
	return plain{p: planner.DescribeBackup{Path: p}, err: err}
}

// RestoreStatement is RESTORE, built by RestoreCluster and RestoreDomain.
type RestoreStatement struct{ plain }

// RestoreCluster restores every domain of the archive at path: RESTORE
// CLUSTER FROM 'path';.
func RestoreCluster(file string) RestoreStatement {
	p, err := path(file)
	return RestoreStatement{plain{p: planner.Restore{Cluster: true, Path: p}, err: err}}
}

// RestoreDomain restores domain from the archive at path: RESTORE DOMAIN
// domain FROM 'path';. As restores it under another name.
func RestoreDomain(domain, file string) RestoreStatement {
	n, err := name(domain)
	p, perr := path(file)
	if err == nil {
		err = perr
	}
	return RestoreStatement{plain{p: planner.Restore{Domain: n, Path: p}, err: err}}
}

// As creates the restored domain under newName: RESTORE DOMAIN domain AS
// newName. On a cluster restore, which restores every domain under its own
// name, it is the statement's error (ErrSyntax, as the text would be).
func (s RestoreStatement) As(newName string) RestoreStatement {
	p := s.p.(planner.Restore)
	if s.err != nil {
		return s
	}
	if p.Cluster {
		s.err = &buildError{kind: grammar.ErrSyntax, msg: "RESTORE CLUSTER restores every domain under its own name; use RestoreDomain to restore one under another name"}
		return s
	}
	n, err := name(newName)
	if err != nil {
		s.err = err
		return s
	}
	p.As = n
	s.p = p
	return s
}

// Resume keeps the archived generation, start point and mapping running:
// RESUME.
func (s RestoreStatement) Resume() RestoreStatement {
	p := s.p.(planner.Restore)
	p.Resume = true
	s.p = p
	return s
}

// DryRun verifies the archive and plans the restore without changing
// anything: DRY RUN.
func (s RestoreStatement) DryRun() RestoreStatement {
	p := s.p.(planner.Restore)
	p.DryRun = true
	s.p = p
	return s
}
