package catalog

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// Modes of everything the catalog keeps in a data directory: the catalog
// holds every domain's mapping, and a snapshot is the whole of it, so only
// the node's own user may read or list any of it.
const (
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// snapshotsDir is where raft's file snapshot store keeps its snapshots
// under the catalog directory.
const snapshotsDir = "snapshots"

// privateSnapshots is raft's file snapshot store with every snapshot made
// private once it is complete. Raft creates the directory of a snapshot
// 0755 and its files with the process umask (0644 under the usual 022); the
// catalog directory above them is 0700, so nobody else can reach them while
// they are written, and Close narrows them before any later change of that
// directory's mode could expose them.
type privateSnapshots struct {
	raft.SnapshotStore
	dir string // the snapshots directory
}

// Create starts a snapshot whose files are made private when it is closed.
func (p *privateSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration, configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := p.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	return &privateSink{SnapshotSink: sink, dir: p.dir}, nil
}

type privateSink struct {
	raft.SnapshotSink
	dir string
}

// Close completes the snapshot, then narrows the modes of its directory
// and files.
func (s *privateSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	return makePrivate(filepath.Join(s.dir, s.ID()))
}

// makePrivate sets every directory at or below root to 0700 and every
// regular file to 0600. It does not follow symbolic links.
func makePrivate(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := privateFileMode
		switch {
		case d.IsDir():
			mode = privateDirMode
		case !d.Type().IsRegular():
			return nil
		}
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("%w: restrict %q to mode %v: %w", ErrDataDir, path, mode, err)
		}
		return nil
	})
}
