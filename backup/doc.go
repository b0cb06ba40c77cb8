// Package backup owns the archive format of domain backups: encoding a
// captured set of domains and their clocks, decoding and verifying an
// archive, and writing and reading archive files crash-safely.
//
// It never touches a catalog: a node captures an Archive (node.Capture)
// that a session encodes here, and a restore decodes an Archive here and turns it into one
// catalog command (node.Restore). Reading never trusts a byte it has not
// verified, and never allocates more than the fixed caps below on behalf of
// a length read from a file.
//
// # Archive format, version 1
//
// An archive is a POSIX ustar tar stream, so standard tools list and
// extract it (tar -tvf prod.nsplbak). Its entries, in this order, are
// regular files with mode 0600:
//
//	nspl-backup/manifest.json          the manifest (always first)
//	nspl-backup/domains/0001.json      one section per domain, in name order
//	nspl-backup/domains/0002.json      …
//	nspl-backup/trailer.json           the whole-archive check (always last)
//
// The manifest is one JSON object:
//
//	{"format":"nspl-backup","version":1,
//	 "captured_at":<UTC signed Unix ns>,"captured_at_text":"<RFC 3339>",
//	 "scope":"cluster"|"domain","node":"<capturing node>",
//	 "catalog_revision":<n>,
//	 "sections":[{"name":"domains/0001.json","length":<bytes>,"sha256":"<hex>"},…]}
//
// Every later version keeps "format" and "version" in a first entry named
// nspl-backup/manifest.json, so a reader refuses an archive from a newer
// build by its version (ErrUnsupportedVersion) rather than by a failed
// check.
//
// A domain section is one JSON object describing the domain at capture:
//
//	{"name":"prod","pace":"PACED","period_ns":1000000000,"skew_ns":100000000,
//	 "placement":"NEUTRAL","status":"running","generation":3,
//	 "start_point":{"mode":"at","logical_start":…,"time_rate":60,"wall_started_at":…}|null,
//	 "mapping":{"wall_started_at":…,"logical_start":…,"time_rate":60}|null,
//	 "authority":{"node":"a","incarnation":7,"revision":5},
//	 "frontier":{"generation":3,"tick_id":12,"boundary":…,"authority_utc":…}|null,
//	 "logical_now":…|null}
//
// Timestamps are signed Unix nanoseconds, durations unsigned nanoseconds,
// rates JSON numbers that decode to the exact float64 that was written.
// start_point is present exactly when generation > 0; mapping exactly when
// the domain is paced and running, and then equals the start point's
// mapping. authority, frontier (the newest accepted tick of the running
// generation at capture) and logical_now (the capturing node's clock
// reading at capture) are informational: a restore never reuses them.
//
// The trailer is {"length":<n>,"sha256":"<hex>"}: the length and SHA-256
// digest of every byte of the tar stream before the trailer's own header.
//
// # Verification
//
// Decode checks, in order: the tar structure (regular files, expected names,
// sizes under MaxSectionBytes, at most MaxDomains sections, the whole under
// MaxArchiveBytes); the manifest's format and version; the trailer's length
// and digest of the whole; each section's length and digest against the
// manifest, and that every listed section is present exactly once; strict
// JSON decoding (unknown fields and trailing data refused); and the domain
// invariants (a paced running domain must carry its mapping, and it must
// equal its start point). A failure is a *CheckError that names the
// section and the check. Nothing is returned until every check passed.
//
// # Writing and reading files
//
// Write encodes the whole archive in memory and WriteFile (which also
// writes the bytes a remote client received) hands it to
// internal/atomicfile's WriteFile, the module's one crash-safe write: a
// private 0600 temporary file in the destination's directory, fsynced,
// renamed over the destination only when complete, then the directory
// fsynced, so the destination never holds a partial archive and a symbolic
// link there is replaced rather than written through. A leading "~/" expands to the
// home directory. Write replaces any file; WriteFile without Overwrite
// replaces only a missing file, an empty one or an older archive
// (CheckReplace, which follows no symbolic link), refusing anything else
// with ErrNotArchive. ReadFile reads regular files only, never a device or
// a FIFO (opened without blocking to find out), and at most
// MaxArchiveBytes.
package backup
