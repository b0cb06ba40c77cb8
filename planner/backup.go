package planner

import (
	"strings"

	"github.com/nspl-dev/nspl/grammar"
)

// Backup writes an archive of the catalog (Cluster) or of one domain to
// Path. Domain is "" for the active domain and always "" for Cluster. Path
// is the literal as written; "~/" is expanded when the backup runs, on the
// machine whose file it is (the client's, over a remote session).
type Backup struct {
	Located
	Cluster bool
	Domain  string
	Path    string
}

// Restore restores domains from the archive at Path: every domain of it
// (Cluster), or the one named Domain, created under As when As is set.
// Resume keeps the archived generation, start point and mapping running;
// DryRun verifies and plans without changing anything.
type Restore struct {
	Located
	Cluster bool
	Domain  string
	As      string
	Path    string
	Resume  bool
	DryRun  bool
}

// DescribeBackup reads and verifies the archive at Path and describes it,
// without touching the catalog.
type DescribeBackup struct {
	Located
	Path string
}

func (Backup) plan()         {}
func (Restore) plan()        {}
func (DescribeBackup) plan() {}

// String returns canonical NSPL: "BACKUP CLUSTER TO '<path>';",
// "BACKUP DOMAIN TO '<path>';" or "BACKUP DOMAIN prod TO '<path>';".
func (p Backup) String() string {
	switch {
	case p.Cluster:
		return "BACKUP CLUSTER TO " + grammar.FormatPath(p.Path) + ";"
	case p.Domain == "":
		return "BACKUP DOMAIN TO " + grammar.FormatPath(p.Path) + ";"
	}
	return "BACKUP DOMAIN " + grammar.FormatName(p.Domain) + " TO " + grammar.FormatPath(p.Path) + ";"
}

// String returns canonical NSPL, for example
// "RESTORE DOMAIN prod AS prod_copy FROM '~/prod.nsplbak' RESUME DRY RUN;".
func (p Restore) String() string {
	var b strings.Builder
	b.WriteString("RESTORE ")
	if p.Cluster {
		b.WriteString("CLUSTER")
	} else {
		b.WriteString("DOMAIN ")
		b.WriteString(grammar.FormatName(p.Domain))
		if p.As != "" {
			b.WriteString(" AS ")
			b.WriteString(grammar.FormatName(p.As))
		}
	}
	b.WriteString(" FROM ")
	b.WriteString(grammar.FormatPath(p.Path))
	if p.Resume {
		b.WriteString(" RESUME")
	}
	if p.DryRun {
		b.WriteString(" DRY RUN")
	}
	b.WriteByte(';')
	return b.String()
}

// String returns canonical NSPL.
func (p DescribeBackup) String() string {
	return "DESCRIBE BACKUP " + grammar.FormatPath(p.Path) + ";"
}

// Target returns the name the restored domain gets: As when set, else
// Domain ("" for a cluster restore).
func (p Restore) Target() string {
	if p.As != "" {
		return p.As
	}
	return p.Domain
}
