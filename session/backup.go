package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// Columns of BACKUP: one row per captured domain.
var backupColumns = []Column{
	{Name: "name", Type: KindText},
	{Name: "pace", Type: KindText},
	{Name: "status", Type: KindText},
	{Name: "generation", Type: KindUint},
	{Name: "logical_now", Type: KindTimestamp},
	{Name: "frontier_tick", Type: KindUint},
}

func (s *Session) backup(ctx context.Context, p planner.Backup) (Result, error) {
	if err := s.refuseInTransaction("BACKUP"); err != nil {
		return Result{}, err
	}
	scope := backup.CaptureScope{Cluster: p.Cluster, Domain: p.Domain}
	if !p.Cluster && scope.Domain == "" {
		var err error
		if scope.Domain, err = s.activeDomain(); err != nil {
			return Result{}, err
		}
	}
	a, err := s.node.Capture(scope)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	dest, size, err := s.archives.WriteArchive(ctx, p.Path, a)
	if err != nil {
		return Result{}, err
	}
	set := &ResultSet{Columns: backupColumns, Rows: make([][]Value, 0, len(a.Domains))}
	for _, d := range a.Domains {
		r := d.Record
		row := []Value{Text(r.Name), Text(r.Pace.String()), Text(r.Status.String()), Uint(r.Generation), Null(), Null()}
		if d.LogicalNow != nil {
			row[4] = Timestamp(*d.LogicalNow)
		}
		if d.Frontier != nil {
			row[5] = Uint(d.Frontier.TickID)
		}
		set.Rows = append(set.Rows, row)
	}
	what := "cluster (" + plural(len(a.Domains), "domain") + ")"
	if !p.Cluster {
		what = fmt.Sprintf("domain '%s'", scope.Domain)
	}
	return Result{Domain: scope.Domain, Set: set, Message: fmt.Sprintf("backed up %s to '%s' (%d bytes, captured at %s)",
		what, dest, size, grammar.FormatTimestamp(a.CapturedAt))}, nil
}

// Columns of RESTORE: one row per restored domain, as it is after the
// restore (or would be, for DRY RUN).
var restoreColumns = []Column{
	{Name: "source", Type: KindText},
	{Name: "name", Type: KindText},
	{Name: "pace", Type: KindText},
	{Name: "status", Type: KindText},
	{Name: "generation", Type: KindUint},
	{Name: "start_point", Type: KindTimestamp},
	{Name: "mapping_logical_start", Type: KindTimestamp},
	{Name: "mapping_wall_started_at", Type: KindTimestamp},
	{Name: "mapping_time_rate", Type: KindRate},
	{Name: "authority", Type: KindText},
}

func (s *Session) restore(ctx context.Context, p planner.Restore) (Result, error) {
	if err := s.refuseInTransaction("RESTORE"); err != nil {
		return Result{}, err
	}
	name, a, err := s.archives.ReadArchive(ctx, p.Path)
	if err != nil {
		return Result{}, err
	}
	plan, err := s.node.Restore(ctx, p, name, a)
	if err != nil {
		return Result{}, err
	}
	set := &ResultSet{Columns: restoreColumns, Rows: make([][]Value, 0, len(plan.Domains))}
	var names []string
	for _, rd := range plan.Domains {
		d := rd.Domain
		row := []Value{Text(rd.Source), Text(d.Name), Text(d.Pace.String()), Text(d.Status.String()), Uint(d.Generation),
			Null(), Null(), Null(), Null(), Null()}
		if d.Generation > 0 {
			row[5] = Timestamp(d.LastStart.LogicalStart)
		}
		if m := d.Mapping; m != nil {
			row[6], row[7], row[8] = Timestamp(m.LogicalStart), Timestamp(m.WallStartedAt), Rate(m.Rate)
		}
		if d.Pace == lifecycle.Paced {
			row[9] = Text(d.Authority.String())
		}
		set.Rows = append(set.Rows, row)
		name := fmt.Sprintf("'%s'", d.Name)
		if rd.Source != d.Name {
			name = fmt.Sprintf("'%s' as '%s'", rd.Source, d.Name)
		}
		names = append(names, fmt.Sprintf("%s (%s, generation %d)", name, d.Status, d.Generation))
	}
	mode := "stopped; START makes the next generation"
	if p.Resume {
		mode = "resumed with the archived generations and mappings"
	}
	msg := fmt.Sprintf("restored %s from '%s' at revision %d, %s", strings.Join(names, ", "), plan.Path, plan.Revision, mode)
	if plan.DryRun {
		msg = fmt.Sprintf("dry run: would restore %s from '%s', %s; nothing changed", strings.Join(names, ", "), plan.Path, mode)
	}
	return Result{Domain: p.Target(), Set: set, Message: msg}, nil
}

// Columns of DESCRIBE BACKUP: one row per archived domain, its record
// followed by its logical frontier and clock reading at capture.
var describeBackupColumns = append(slices.Clip(domainColumns),
	Column{Name: "frontier_tick", Type: KindUint},
	Column{Name: "frontier_boundary", Type: KindTimestamp},
	Column{Name: "logical_now", Type: KindTimestamp},
)

// describeBackup reads and verifies the archive. It never touches the
// node or its catalog.
func (s *Session) describeBackup(ctx context.Context, p planner.DescribeBackup) (Result, error) {
	if err := s.refuseInTransaction("DESCRIBE BACKUP"); err != nil {
		return Result{}, err
	}
	path, a, err := s.archives.ReadArchive(ctx, p.Path)
	if err != nil {
		return Result{}, err
	}
	return Result{Set: DescribeBackupSet(a), Message: fmt.Sprintf(
		"backup '%s': format version %d, scope %s, captured at %s by node '%s' at catalog revision %d, %s",
		path, a.Version, a.Scope, grammar.FormatTimestamp(a.CapturedAt), a.Node, a.CatalogRevision, plural(len(a.Domains), "domain"))}, nil
}

// DescribeBackupSet returns the result set DESCRIBE BACKUP shows for a:
// per domain its pace, period, skew, placement, status, generation, start
// point, mapping, logical frontier and clock reading at capture.
func DescribeBackupSet(a backup.Archive) *ResultSet {
	set := &ResultSet{Columns: describeBackupColumns, Rows: make([][]Value, 0, len(a.Domains))}
	for _, cd := range a.Domains {
		row := domainRow(cd.Record, len(describeBackupColumns))
		n := len(domainColumns)
		if f := cd.Frontier; f != nil {
			row[n], row[n+1] = Uint(f.TickID), Timestamp(f.Boundary)
		}
		if cd.LogicalNow != nil {
			row[n+2] = Timestamp(*cd.LogicalNow)
		}
		set.Rows = append(set.Rows, row)
	}
	return set
}
