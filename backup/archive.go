package backup

import (
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/wire"
)

// Format is the value of the manifest's "format" field.
const Format = "nspl-backup"

// Version is the archive format version Encode writes and the newest one
// Decode reads.
const Version = 1

// Caps on what a reader allocates for lengths it finds in a file.
const (
	// MaxArchiveBytes is the largest archive Read and Decode accept.
	MaxArchiveBytes = 64 << 20
	// MaxSectionBytes is the largest manifest, domain section or trailer.
	MaxSectionBytes = 1 << 20
	// MaxDomains is the most domain sections one archive may hold.
	MaxDomains = 9999
)

// Scope is what a backup captured.
type Scope string

// The scopes.
const (
	// ScopeCluster is BACKUP CLUSTER: every domain of the catalog.
	ScopeCluster Scope = "cluster"
	// ScopeDomain is BACKUP DOMAIN: one domain.
	ScopeDomain Scope = "domain"
)

// Archive is a verified or to-be-written backup: the domains of a catalog
// captured at one instant.
type Archive struct {
	// Version is the format version the archive was read in (Encode always
	// writes Version).
	Version int
	// CapturedAt is the capturing node's UTC sample, signed Unix
	// nanoseconds, taken once for the whole capture.
	CapturedAt int64
	// Scope says whether the whole catalog or one domain was captured.
	Scope Scope
	// Node is the name of the capturing node.
	Node string
	// CatalogRevision is the catalog revision the capture read.
	CatalogRevision uint64
	// Domains are the captured domains, sorted by name.
	Domains []Domain
}

// Domain is one captured domain.
type Domain struct {
	// Record is the domain's committed record at capture. Its Mapping is
	// set exactly when it is paced and running. Its Authority and Revision
	// describe the source catalog; a restore never reuses them.
	Record record.Domain
	// Frontier is the newest tick of the running generation the capturing
	// node had accepted; nil when none (stopped, unpaced, or no tick yet).
	Frontier *Frontier
	// LogicalNow is the capturing node's reading of the domain clock at
	// CapturedAt; nil for a stopped domain.
	LogicalNow *int64
}

// Frontier is a domain's logical frontier at capture: its newest accepted
// tick.
type Frontier struct {
	Generation   uint64 `json:"generation"`
	TickID       uint64 `json:"tick_id"`
	Boundary     int64  `json:"boundary"`
	AuthorityUTC int64  `json:"authority_utc"`
}

// Find returns the captured domain with the given name.
func (a Archive) Find(name string) (Domain, bool) {
	for _, d := range a.Domains {
		if d.Record.Name == name {
			return d, true
		}
	}
	return Domain{}, false
}

// Names returns the names of the captured domains, in archive order.
func (a Archive) Names() []string {
	out := make([]string, len(a.Domains))
	for i, d := range a.Domains {
		out[i] = d.Record.Name
	}
	return out
}

// Sentinel errors. Every error the package returns wraps one of them.
var (
	// ErrCorrupt: the archive failed a check (structure, length, digest,
	// decoding or a domain invariant). The *CheckError says which.
	ErrCorrupt = wire.NewSentinel("archive_corrupt", "backup archive is corrupt")
	// ErrUnsupportedVersion: the archive's format version is not one this
	// build reads (a newer build wrote it).
	ErrUnsupportedVersion = wire.NewSentinel("archive_version", "backup archive format version is not supported")
	// ErrMissingMapping: a paced running domain in the archive has no
	// mapping, so its clock cannot be restored.
	ErrMissingMapping = wire.NewSentinel("archive_missing_mapping", "paced running domain has no mapping")
	// ErrTooLarge: the archive or one of its sections is over its cap.
	ErrTooLarge = wire.NewSentinel("archive_too_large", "backup archive is too large")
	// ErrInvalidArchive: an Archive that Encode cannot write (duplicate or
	// empty names, a domain breaking an invariant).
	ErrInvalidArchive = wire.NewSentinel("archive_invalid", "invalid backup archive")
	// ErrPath: the path cannot be used (empty, '~' without a home
	// directory, a directory, or an I/O failure reading or writing it).
	ErrPath = wire.NewSentinel("archive_path", "backup path cannot be used")
	// ErrNotArchive: the destination of a write exists and is not an nspl
	// archive (CheckReplace), so it is not replaced without being told to.
	ErrNotArchive = wire.NewSentinel("archive_not_archive", "backup destination is not an nspl archive")
)

// CheckError is a failed archive check. Section is the entry that failed
// ("manifest.json", "domains/0001.json", "trailer.json", or "archive" for
// the tar stream as a whole), Check names the check ("structure",
// "version", "length", "sha256", "decode", "mapping", …) and Detail says
// what was found. Path is the file, when the archive came from one.
type CheckError struct {
	Path    string
	Section string
	Check   string
	Detail  string
	Err     error
	// NotArchive says the data was never an nspl archive: nothing of one
	// could be read from it (no tar stream, or a tar stream whose first
	// entry is not nspl's), as opposed to an archive that was damaged.
	NotArchive bool
}

// Error returns the check in one line, for example
// `backup '/b/prod.nsplbak': section "domains/0001.json": check sha256
// failed: … ; the archive is damaged, restore from another copy`.
func (e *CheckError) Error() string {
	where := "backup archive"
	if e.Path != "" {
		where = fmt.Sprintf("backup '%s'", e.Path)
	}
	advice := "the archive is damaged or was altered; use another copy of the backup"
	switch {
	case e.NotArchive:
		advice = "this file is not an nspl archive (nothing nspl's BACKUP writes could be read from it); check that the path names a file BACKUP wrote"
	case errors.Is(e.Err, ErrUnsupportedVersion):
		advice = "a newer nspl wrote it; restore it with that version or newer"
	case errors.Is(e.Err, ErrMissingMapping):
		advice = "this archive cannot restore the domain's clock; back the domain up again from a catalog that holds its mapping"
	case errors.Is(e.Err, ErrTooLarge):
		advice = "this is not an archive nspl wrote"
	}
	return fmt.Sprintf("%s: section %q: check %s failed: %s; %s", where, e.Section, e.Check, e.Detail, advice)
}

// Unwrap returns the sentinel that classifies the failure.
func (e *CheckError) Unwrap() error { return e.Err }

func fail(section, check string, err error, format string, args ...any) *CheckError {
	return &CheckError{Section: section, Check: check, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error {
	return []error{ErrMissingMapping, ErrUnsupportedVersion, ErrTooLarge, ErrCorrupt, ErrInvalidArchive, ErrNotArchive, ErrPath}
}
