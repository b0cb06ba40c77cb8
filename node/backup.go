package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/lifecycle"
)

// BackupScope says what a backup captures, as backup defines it.
type BackupScope = backup.CaptureScope

// Capture reads one consistent catalog state and returns it as an archive:
// the domains in scope with their committed records, one UTC sample as the
// capture time, and per running domain its reading at that instant (the
// mapping's projection of it for a paced domain, the instant itself for an
// unpaced one) and the newest tick of its generation this node accepted.
// A missing domain is a *lifecycle.Error matching ErrDomainNotFound.
func (n *Node) Capture(scope BackupScope) (backup.Archive, error) {
	s := n.catalog.State()
	utc := n.src.Now()
	a := backup.Archive{Version: backup.Version, CapturedAt: utc, Scope: backup.ScopeCluster,
		Node: n.cfg.Name, CatalogRevision: s.Revision()}
	var domains []lifecycle.Domain
	if scope.Cluster {
		domains = s.Domains()
	} else {
		d, ok := s.Domain(scope.Domain)
		if !ok {
			return backup.Archive{}, errNotFound(scope.Domain)
		}
		a.Scope = backup.ScopeDomain
		domains = []lifecycle.Domain{d}
	}
	for _, d := range domains {
		cd := backup.Domain{Record: d}
		if d.Running() {
			now, err := lifecycle.Readable(d, utc)
			if err != nil {
				return backup.Archive{}, fmt.Errorf("domain '%s': reading its clock at capture: %w", d.Name, err)
			}
			cd.LogicalNow = now
			if t := n.registry.Progress(d.Name); t.ID > 0 && t.Generation == d.Generation {
				cd.Frontier = &backup.Frontier{Generation: t.Generation, TickID: t.ID, Boundary: t.Boundary, AuthorityUTC: t.AuthorityUTC}
			}
		}
		a.Domains = append(a.Domains, cd)
	}
	return a, nil
}

// RestorePlan is what a restore did, or for a dry run would do, and
// RestoredDomain one domain of it, as backup defines them.
type (
	RestorePlan    = backup.RestorePlan
	RestoredDomain = backup.RestoredDomain
)

// Restore restores domains from the archive a, named name in messages, as
// one catalog command, all or nothing. It never opens a file: the caller
// read a and verified it whole (backup.Decode refuses a damaged archive, or
// a paced running domain without its mapping, before anything here runs);
// req names no path. Restore selects the domains (every one for
// RESTORE CLUSTER, the named one otherwise, under req.Target), and
// resolves the command:
//
//   - default: each domain is created stopped with its archived pace,
//     period, skew and placement, no mapping and no authority, keeping its
//     generation and start point, so a later START makes generation + 1;
//   - RESUME: each domain keeps its archived status; a running one keeps
//     its generation and start point, and a paced one its mapping
//     verbatim (the downtime advanced its projection), with a new
//     authority selected here, before proposing, from this cluster's live
//     voters (the archived authority is never reused).
//
// The command commits like every control-plane command (through the leader
// via Config.Forward on a follower). A target name that exists refuses the whole restore (a cluster restore
// restores every domain or none); the command is first applied to a copy
// of the catalog, so a refusal is reported without proposing. With
// req.DryRun Restore returns that plan and changes nothing.
func (n *Node) Restore(ctx context.Context, req backup.RestoreRequest, name string, a backup.Archive) (RestorePlan, error) {
	path := name
	plan := RestorePlan{Path: path, Archive: a, Resume: req.Resume, DryRun: req.DryRun}
	type pick struct {
		source backup.Domain
		target string
	}
	var picks []pick
	if req.Cluster {
		for _, d := range a.Domains {
			picks = append(picks, pick{d, d.Record.Name})
		}
		if len(picks) == 0 {
			return RestorePlan{}, fmt.Errorf("%w: backup '%s' holds no domain; nothing was restored", ErrNotInArchive, path)
		}
	} else {
		d, ok := a.Find(req.Domain)
		if !ok {
			return RestorePlan{}, fmt.Errorf("%w: domain '%s' is not in backup '%s', which holds %s; run DESCRIBE BACKUP '%s' to list it",
				ErrNotInArchive, req.Domain, path, quoteNames(a.Names()), path)
		}
		picks = append(picks, pick{d, req.Target})
	}

	s := n.catalog.State()
	if s.Len()+len(picks) > n.cfg.MaxDomains {
		return RestorePlan{}, n.domainLimit(picks[0].target, s.Len(), len(picks))
	}
	available, voters, err := n.candidates(s)
	if err != nil {
		return RestorePlan{}, err
	}
	cmd := lifecycle.Restore{Domains: make([]lifecycle.RestoredDomain, 0, len(picks))}
	for _, pk := range picks {
		r := pk.source.Record
		rd := lifecycle.RestoredDomain{
			Name: pk.target, Pace: r.Pace, Period: r.Period, Skew: r.Skew, Placement: r.Placement,
			Generation: r.Generation, LastStart: r.LastStart, Running: r.Running(), Resume: req.Resume,
			AuthorityRevision: r.Authority.Revision,
		}
		if req.Resume && r.Running() && r.Pace == lifecycle.Paced {
			id, ok := lifecycle.SelectAuthority(pk.target, available, voters)
			if !ok {
				return RestorePlan{}, &lifecycle.Error{Code: lifecycle.CodeNoLiveVoter, Domain: pk.target, Message: fmt.Sprintf(
					"no live voter is available to own the clock for restored domain '%s'; nothing was restored: wait for a voting node, or restore without RESUME and START it later", pk.target)}
			}
			rd.Authority = &id
		}
		cmd.Domains = append(cmd.Domains, rd)
	}
	command := lifecycle.Command{Op: lifecycle.OpRestore, Restore: &cmd}
	if err := command.Validate(); err != nil {
		return RestorePlan{}, err
	}
	trial := s.Clone()
	if res := trial.Apply(command); res.Err() != nil {
		return RestorePlan{}, res.Err()
	}
	after := trial
	if req.DryRun {
		plan.Revision = s.Revision()
	} else {
		res, err := n.commit(ctx, command)
		if err != nil {
			return RestorePlan{}, err
		}
		if err := res.Err(); err != nil {
			return RestorePlan{}, err
		}
		unconfirmed, err := n.complete(ctx, res.Revision)
		if err != nil {
			return RestorePlan{}, fmt.Errorf("restore %w", err)
		}
		plan.Revision, plan.Unconfirmed = res.Revision, unconfirmed
		after = n.catalog.State()
	}
	for _, pk := range picks {
		d, _ := after.Domain(pk.target)
		plan.Domains = append(plan.Domains, RestoredDomain{Source: pk.source.Record.Name, Domain: d})
	}
	return plan, nil
}

func quoteNames(names []string) string {
	if len(names) == 0 {
		return "no domain"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
