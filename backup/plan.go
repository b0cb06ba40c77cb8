package backup

import "github.com/nspl-dev/nspl/record"

// CaptureScope says what a backup captures: every domain of the catalog
// (Cluster) or the one named Domain.
type CaptureScope struct {
	Cluster bool
	Domain  string
}

// RestoreRequest is a RESTORE as the node runs it, once the caller has read
// and verified the archive: every domain of the archive (Cluster), or the
// one named Domain restored under the name Target. Resume keeps each
// domain's archived status and clock; DryRun plans the restore and changes
// nothing. It names no file: the archive reaches the node as a value.
type RestoreRequest struct {
	Cluster bool
	Domain  string
	Target  string
	Resume  bool
	DryRun  bool
}

// RestorePlan is what a restore did, or for a dry run would do.
type RestorePlan struct {
	// Path is the archive's name, as the restore was given it.
	Path string
	// Archive is the verified archive.
	Archive Archive
	// Domains are the restored domains, in name order of the targets.
	Domains []RestoredDomain
	// Resume and DryRun repeat the request.
	Resume bool
	DryRun bool
	// Revision is the catalog revision after the restore; for a dry run,
	// the current revision, which the restore would advance by one.
	Revision uint64
	// Unconfirmed names the live nodes that had not installed Revision
	// when the restore's completion boundary ended (lifecycle.Outcome's
	// Unconfirmed).
	Unconfirmed []string
}

// RestoredDomain is one domain of a restore.
type RestoredDomain struct {
	// Source is the domain's name in the archive.
	Source string
	// Domain is the domain's record after the restore (for a dry run, the
	// record it would have).
	Domain record.Domain
}
