package session

import (
	"context"

	"github.com/nspl-dev/nspl/backup"
)

// Archives is where a session's BACKUP puts the archive it captured and
// where its RESTORE and DESCRIBE BACKUP get the archive they name. The
// name is the statement's path literal; what it means is the Archives'
// business: a file on this machine for LocalArchives, a file on the
// client's machine for a remote session (the server's implementation),
// which the node never opens.
//
// A session calls its Archives on its request lane, one request at a time.
type Archives interface {
	// WriteArchive stores a under name and returns the name to report
	// (for a file, its resolved path) and the encoded archive's size.
	WriteArchive(ctx context.Context, name string, a backup.Archive) (string, int64, error)
	// ReadArchive returns the archive name names, verified whole
	// (backup.Decode), with the name to report.
	ReadArchive(ctx context.Context, name string) (string, backup.Archive, error)
}

// LocalArchives reads and writes archive files on this machine: the
// statement's path, "~/" expanded, as backup.Write and backup.Read take
// it. It is the Archives of an embedded session (Options.Archives nil). A
// BACKUP replaces a file that is not an nspl archive only with Overwrite,
// as a remote client's does (client.Config.OverwriteArchives).
type LocalArchives struct {
	Overwrite bool
}

// WriteArchive writes a to the file name crash-safely (backup.Write).
func (l LocalArchives) WriteArchive(_ context.Context, name string, a backup.Archive) (string, int64, error) {
	return backup.Write(name, a, backup.WriteOptions{Overwrite: l.Overwrite})
}

// ReadArchive reads and verifies the file name (backup.Read).
func (LocalArchives) ReadArchive(_ context.Context, name string) (string, backup.Archive, error) {
	return backup.Read(name)
}
