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
	"github.com/nspl-dev/nspl/wire"
)

// Columns of BACKUP: one row per captured domain.
var backupColumns = []wire.Column{
	{Name: "name", Type: wire.KindText},
	{Name: "pace", Type: wire.KindText},
	{Name: "status", Type: wire.KindText},
	{Name: "generation", Type: wire.KindUint},
	{Name: "logical_now", Type: wire.KindTimestamp},
	{Name: "frontier_tick", Type: wire.KindUint},
}

func (s *Session) backup(ctx context.Context, p planner.Backup) (wire.Result, error) {
	if err := s.refuseInTransaction("BACKUP"); err != nil {
		return wire.Result{}, err
	}
	scope := backup.CaptureScope{Cluster: p.Cluster, Domain: p.Domain}
	if !p.Cluster && scope.Domain == "" {
		var err error
		if scope.Domain, err = s.activeDomain(); err != nil {
			return wire.Result{}, err
		}
	}
	a, err := s.node.Capture(scope)
	if err != nil {
		return wire.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return wire.Result{}, err
	}
	dest, size, err := s.archives.WriteArchive(ctx, p.Path, a)
	if err != nil {
		return wire.Result{}, err
	}
	set := &wire.ResultSet{Columns: backupColumns, Rows: make([][]wire.Value, 0, len(a.Domains))}
	for _, d := range a.Domains {
		r := d.Record
		row := []wire.Value{wire.Text(r.Name), wire.Text(r.Pace.String()), wire.Text(r.Status.String()), wire.Uint(r.Generation), wire.Null(), wire.Null()}
		if d.LogicalNow != nil {
			row[4] = wire.Timestamp(*d.LogicalNow)
		}
		if d.Frontier != nil {
			row[5] = wire.Uint(d.Frontier.TickID)
		}
		set.Rows = append(set.Rows, row)
	}
	what := "cluster (" + plural(len(a.Domains), "domain") + ")"
	if !p.Cluster {
		what = fmt.Sprintf("domain '%s'", scope.Domain)
	}
	return wire.Result{Domain: scope.Domain, Set: set, Message: fmt.Sprintf("backed up %s to '%s' (%d bytes, captured at %s)",
		what, dest, size, grammar.FormatTimestamp(a.CapturedAt))}, nil
}

// Columns of RESTORE: one row per restored domain, as it is after the
// restore (or would be, for DRY RUN).
var restoreColumns = []wire.Column{
	{Name: "source", Type: wire.KindText},
	{Name: "name", Type: wire.KindText},
	{Name: "pace", Type: wire.KindText},
	{Name: "status", Type: wire.KindText},
	{Name: "generation", Type: wire.KindUint},
	{Name: "start_point", Type: wire.KindTimestamp},
	{Name: "mapping_logical_start", Type: wire.KindTimestamp},
	{Name: "mapping_wall_started_at", Type: wire.KindTimestamp},
	{Name: "mapping_time_rate", Type: wire.KindRate},
	{Name: "authority", Type: wire.KindText},
}

func (s *Session) restore(ctx context.Context, p planner.Restore) (wire.Result, error) {
	if err := s.refuseInTransaction("RESTORE"); err != nil {
		return wire.Result{}, err
	}
	name, a, err := s.archives.ReadArchive(ctx, p.Path)
	if err != nil {
		return wire.Result{}, err
	}
	plan, err := s.node.Restore(ctx, backup.RestoreRequest{
		Cluster: p.Cluster, Domain: p.Domain, Target: p.Target(), Resume: p.Resume, DryRun: p.DryRun,
	}, name, a)
	if err != nil {
		return wire.Result{}, err
	}
	set := &wire.ResultSet{Columns: restoreColumns, Rows: make([][]wire.Value, 0, len(plan.Domains))}
	var names []string
	for _, rd := range plan.Domains {
		d := rd.Domain
		row := []wire.Value{wire.Text(rd.Source), wire.Text(d.Name), wire.Text(d.Pace.String()), wire.Text(d.Status.String()), wire.Uint(d.Generation),
			wire.Null(), wire.Null(), wire.Null(), wire.Null(), wire.Null()}
		if d.Generation > 0 {
			row[5] = wire.Timestamp(d.LastStart.LogicalStart)
		}
		if m := d.Mapping; m != nil {
			row[6], row[7], row[8] = wire.Timestamp(m.LogicalStart), wire.Timestamp(m.WallStartedAt), wire.Rate(m.Rate)
		}
		if d.Pace == lifecycle.Paced {
			row[9] = wire.Text(d.Authority.String())
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
	return wire.Result{Domain: p.Target(), Set: set, Message: msg,
		Warnings: unconfirmedWarnings(plan.Revision, plan.Unconfirmed)}, nil
}

// Columns of DESCRIBE BACKUP: one row per archived domain, its record
// followed by its logical frontier and clock reading at capture.
var describeBackupColumns = append(slices.Clip(domainColumns),
	wire.Column{Name: "frontier_tick", Type: wire.KindUint},
	wire.Column{Name: "frontier_boundary", Type: wire.KindTimestamp},
	wire.Column{Name: "logical_now", Type: wire.KindTimestamp},
)

// describeBackup reads and verifies the archive. It never touches the
// node or its catalog.
func (s *Session) describeBackup(ctx context.Context, p planner.DescribeBackup) (wire.Result, error) {
	if err := s.refuseInTransaction("DESCRIBE BACKUP"); err != nil {
		return wire.Result{}, err
	}
	path, a, err := s.archives.ReadArchive(ctx, p.Path)
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Set: DescribeBackupSet(a), Message: fmt.Sprintf(
		"backup '%s': format version %d, scope %s, captured at %s by node '%s' at catalog revision %d, %s",
		path, a.Version, a.Scope, grammar.FormatTimestamp(a.CapturedAt), a.Node, a.CatalogRevision, plural(len(a.Domains), "domain"))}, nil
}

// DescribeBackupSet returns the result set DESCRIBE BACKUP shows for a:
// per domain its pace, period, skew, placement, status, generation, start
// point, mapping, logical frontier and clock reading at capture.
func DescribeBackupSet(a backup.Archive) *wire.ResultSet {
	set := &wire.ResultSet{Columns: describeBackupColumns, Rows: make([][]wire.Value, 0, len(a.Domains))}
	for _, cd := range a.Domains {
		row := domainRow(cd.Record, len(describeBackupColumns))
		n := len(domainColumns)
		if f := cd.Frontier; f != nil {
			row[n], row[n+1] = wire.Uint(f.TickID), wire.Timestamp(f.Boundary)
		}
		if cd.LogicalNow != nil {
			row[n+2] = wire.Timestamp(*cd.LogicalNow)
		}
		set.Rows = append(set.Rows, row)
	}
	return set
}
