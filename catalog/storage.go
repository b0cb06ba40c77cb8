package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Layout of a data directory. The catalog keeps everything under one
// subdirectory so other parts of the node can share the data directory.
const (
	catalogDir    = "catalog"
	raftDBFile    = "raft.db"
	snapshotsKept = 2
	// logCacheSize is the number of recent log entries kept in memory in
	// front of the log store.
	logCacheSize = 512
)

// dataDirLockTimeout bounds the wait for another process's lock on the log
// store before Open reports the directory as in use. Tests shorten it.
var dataDirLockTimeout = time.Second

// stores are the raft log, stable and snapshot stores of one node.
type stores struct {
	log    raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	bolt   *raftboltdb.BoltStore // nil for in-memory stores
	// serverID is the persisted server ID, empty for in-memory stores.
	serverID string
}

// openStores opens in-memory stores when dataDir is empty, and otherwise
// raft-boltdb v2 (log and stable store, fsync on every write) plus file
// snapshots under dataDir/catalog, creating the directory and the
// persisted server ID on first use. The catalog directory and all it holds
// are private to the node's user (makePrivate, privateSnapshots).
func openStores(dataDir string, logger hclog.Logger) (*stores, error) {
	if dataDir == "" {
		mem := raft.NewInmemStore()
		return &stores{log: mem, stable: mem, snaps: raft.NewInmemSnapshotStore()}, nil
	}
	dir := filepath.Join(dataDir, catalogDir)
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return nil, fmt.Errorf("%w: create %q: %w", ErrDataDir, dir, err)
	}
	// A directory made by an older build was 0750; narrow it and whatever
	// it holds before anything is read or written.
	if err := makePrivate(dir); err != nil {
		return nil, err
	}
	id, err := loadOrCreateServerID(dir)
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dir, raftDBFile)
	bolt, err := raftboltdb.New(raftboltdb.Options{
		Path:        dbPath,
		BoltOptions: &bbolt.Options{Timeout: dataDirLockTimeout},
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %q is locked by another process; stop that node or choose another --data-dir", ErrDataDir, dbPath)
		}
		return nil, fmt.Errorf("%w: open %q: %w", ErrDataDir, dbPath, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsKept, logger)
	if err != nil {
		_ = bolt.Close()
		return nil, fmt.Errorf("%w: open snapshots in %q: %w", ErrDataDir, dir, err)
	}
	if err := os.Chmod(filepath.Join(dir, snapshotsDir), privateDirMode); err != nil {
		_ = bolt.Close()
		return nil, fmt.Errorf("%w: restrict %q: %w", ErrDataDir, dir, err)
	}
	cached, err := raft.NewLogCache(logCacheSize, bolt)
	if err != nil {
		_ = bolt.Close()
		return nil, fmt.Errorf("catalog: log cache: %w", err)
	}
	return &stores{log: cached, stable: bolt, snaps: &privateSnapshots{SnapshotStore: snaps, dir: filepath.Join(dir, snapshotsDir)}, bolt: bolt, serverID: id}, nil
}

// hasState reports whether the stores hold any raft state, in which case
// the node must not bootstrap again.
func (s *stores) hasState() (bool, error) {
	return raft.HasExistingState(s.log, s.stable, s.snaps)
}

// close releases the stores. Raft must have shut down first.
func (s *stores) close() error {
	if s.bolt == nil {
		return nil
	}
	return s.bolt.Close()
}
