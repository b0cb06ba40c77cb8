package catalog

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// waitFor waits until cond holds for the node's state, following changes.
func waitFor(t *testing.T, n *Replica, cond func(*lifecycle.State) bool) *lifecycle.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	sub := n.Subscribe()
	defer sub.Close()
	for {
		select {
		case c, ok := <-sub.C():
			require.True(t, ok, "node closed")
			if cond(c.State) {
				return c.State
			}
		case <-ctx.Done():
			t.Fatalf("condition not reached; state at revision %d", n.Revision())
		}
	}
}

// requireSameLifecycle compares what must survive a restart: every domain
// with its definition, status, generation, start point and mapping. The
// authority fence is compared separately because the leader reconciles it
// to the new incarnation after a restart.
func requireSameLifecycle(t *testing.T, want, got *lifecycle.State) {
	t.Helper()
	strip := func(ds []lifecycle.Domain) []lifecycle.Domain {
		for i := range ds {
			ds[i].Authority = lifecycle.AuthorityFence{}
			ds[i].Revision = 0
		}
		return ds
	}
	require.Equal(t, strip(want.Domains()), strip(got.Domains()))
}

func TestDurabilityAcrossReopen(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{NodeName: "local", DataDir: dir, Logger: quietLogger(t)}
			if snapshot {
				cfg.TrailingLogs = 1
			}
			n1, err := Open(bg, cfg)
			require.NoError(t, err)
			id1 := n1.Identity()
			for _, c := range []lifecycle.Command{
				createCmd("prod", lifecycle.Paced),
				createCmd("wall", lifecycle.Unpaced),
				startCmd("prod", &id1, 1_767_225_600_000_000_000, 1_767_225_600_000_000_000, 60),
				startCmd("wall", nil, 1_767_225_601_000_000_000, 1_767_225_601_000_000_000, 1),
				stopCmd("prod"),
				startCmd("prod", &id1, 1_767_225_700_000_000_000, -1_000_000_000, 0.25),
			} {
				res, err := n1.Propose(bg, c)
				require.NoError(t, err)
				require.NoError(t, res.Err())
			}
			if snapshot {
				require.NoError(t, n1.Snapshot())
				require.NoError(t, n1.Snapshot(), "nothing new to snapshot is not an error")
				first, err := n1.stores.log.FirstIndex()
				require.NoError(t, err)
				last, err := n1.stores.log.LastIndex()
				require.NoError(t, err)
				require.Greater(t, first, uint64(1), "the snapshot truncated the log")
				require.GreaterOrEqual(t, last-first+1, uint64(1))
				t.Logf("log holds entries %d..%d after the snapshot", first, last)
			}
			// One more change lives only in the log tail.
			_, err = n1.Propose(bg, alterCmd("wall", lifecycle.SuggestSeparation))
			require.NoError(t, err)
			want := n1.State()
			serverID := n1.ServerID()
			require.NoError(t, n1.Close())

			prod, _ := want.Domain("prod")
			require.Equal(t, uint64(2), prod.Generation)
			require.Equal(t, &lifecycle.AuthorityFence{Node: "local", Incarnation: id1.Incarnation, Revision: 3}, &prod.Authority)

			n2, err := Open(bg, cfg)
			require.NoError(t, err)
			defer n2.Close()
			require.Equal(t, serverID, n2.ServerID(), "the server id is stable for the data directory")
			require.NotEqual(t, id1.Incarnation, n2.Incarnation(), "every open is a new incarnation")
			reg, ok := n2.State().Node("local")
			require.True(t, ok)
			require.Equal(t, n2.Incarnation(), reg.Incarnation)

			// The committed lifecycle survives; the leader then moves the
			// authority from the dead incarnation to the live one.
			got := waitFor(t, n2, func(s *lifecycle.State) bool {
				d, _ := s.Domain("prod")
				return d.Authority.Identity() == n2.Identity()
			})
			requireSameLifecycle(t, want, got)
			gotProd, _ := got.Domain("prod")
			require.Equal(t, prod.Generation, gotProd.Generation, "reassignment keeps the generation")
			require.Equal(t, prod.Mapping, gotProd.Mapping, "reassignment keeps the mapping")
			require.Equal(t, prod.Authority.Revision+1, gotProd.Authority.Revision)
			wall, _ := got.Domain("wall")
			require.Equal(t, lifecycle.SuggestSeparation, wall.Placement)
			require.Equal(t, lifecycle.Running, wall.Status)
			require.Equal(t, uint64(1), wall.Generation)
			require.Nil(t, wall.Mapping)
			require.NoError(t, n2.Close())

			n3, err := Open(bg, cfg)
			require.NoError(t, err)
			defer n3.Close()
			requireSameLifecycle(t, got, n3.State())
		})
	}
}

// TestSnapshotAfterThreshold lets raft take snapshots on its own while
// writes continue, then recovers from snapshot plus log.
func TestSnapshotAfterThreshold(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, SnapshotThreshold: 16, TrailingLogs: 4, SnapshotInterval: 5 * time.Millisecond}
	n := openNode(t, cfg)
	sub := n.Subscribe()
	defer sub.Close()
	for i := range 200 {
		res, err := n.Propose(bg, createCmd(fmt.Sprintf("d%03d", i), lifecycle.Unpaced))
		require.NoError(t, err)
		require.NoError(t, res.Err())
	}
	want := n.State()
	require.Eventually(t, func() bool {
		first, err := n.stores.log.FirstIndex()
		return err == nil && first > 100
	}, 10*time.Second, 5*time.Millisecond, "raft snapshots and truncates the log on its own")
	require.NoError(t, n.Close())

	var restored []Change
	var mu sync.Mutex
	cfg.OnChange = func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		restored = append(restored, c)
	}
	n2 := openNode(t, cfg)
	requireSameLifecycle(t, want, n2.State())
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, restored)
	require.True(t, restored[0].Restored, "recovery starts with the snapshot restore")
}

const crashDirEnv = "NSPL_CATALOG_CRASH_DIR"

// TestCrashKeepsAcknowledgedWrites runs a child copy of this test binary
// that writes continuously to a data directory and prints every
// acknowledged write, kills it with SIGKILL mid-writes, and reopens the
// directory: every acknowledged write must be there.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsAcknowledgedWrites$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = testWriter{t}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	const killAfter = 300
	var acked []string
	scan := bufio.NewScanner(out)
	for scan.Scan() {
		name, ok := strings.CutPrefix(scan.Text(), "ack ")
		if !ok {
			continue
		}
		acked = append(acked, name)
		if len(acked) == killAfter {
			require.NoError(t, cmd.Process.Kill())
		}
	}
	require.NoError(t, scan.Err())
	err = cmd.Wait()
	require.Error(t, err, "the child was killed, it did not exit")
	require.GreaterOrEqual(t, len(acked), killAfter, "the child acknowledged writes before it was killed")

	n := openNode(t, crashConfig(dir, quietLogger(t)))
	s := n.State()
	for _, name := range acked {
		_, ok := s.Domain(name)
		require.True(t, ok, "acknowledged domain %q was lost", name)
	}
	t.Logf("%d acknowledged writes before SIGKILL, %d domains recovered", len(acked), len(s.Domains()))
}

func crashConfig(dir string, logger *slog.Logger) Config {
	return Config{NodeName: "local", DataDir: dir, Logger: logger,
		SnapshotThreshold: 64, TrailingLogs: 16, SnapshotInterval: 5 * time.Millisecond}
}

// crashChild writes until it is killed, with four concurrent writers so
// raft batches, and snapshots taken along the way.
func crashChild(dir string) {
	n, err := Open(bg, crashConfig(dir, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-%06d", w, i)
				res, err := n.Propose(bg, createCmd(name, lifecycle.Unpaced))
				if err != nil || res.Err() != nil {
					fmt.Fprintln(os.Stderr, "propose:", err, res.Err())
					os.Exit(3)
				}
				mu.Lock()
				_, _ = io.WriteString(os.Stdout, "ack "+name+"\n")
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestCorruptSnapshotRefused flips one byte of the persisted snapshot: the
// node refuses the data directory instead of starting from partial state.
func TestCorruptSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{NodeName: "local", DataDir: dir, Logger: quietLogger(t), TrailingLogs: 1}
	n, err := Open(bg, cfg)
	require.NoError(t, err)
	_, err = n.Propose(bg, createCmd("prod", lifecycle.Paced))
	require.NoError(t, err)
	require.NoError(t, n.Snapshot())
	require.NoError(t, n.Close())

	states, err := filepath.Glob(filepath.Join(dir, catalogDir, "snapshots", "*", "state.bin"))
	require.NoError(t, err)
	require.Len(t, states, 1)
	b, err := os.ReadFile(states[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(states[0], b, 0o600))

	_, err = Open(bg, cfg)
	require.ErrorIs(t, err, ErrDataDir)
}

// TestDataDirIsPrivate: the catalog directory, its snapshots and every file
// in them are readable by the node's user alone, including a directory an
// older build left group-readable.
func TestDataDirIsPrivate(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, catalogDir)
	require.NoError(t, os.MkdirAll(filepath.Join(cat, snapshotsDir, "old"), 0o755))
	require.NoError(t, os.Chmod(cat, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(cat, snapshotsDir, "old", "stray"), nil, 0o644))

	cfg := Config{NodeName: "local", DataDir: dir, Logger: quietLogger(t), TrailingLogs: 1}
	n, err := Open(bg, cfg)
	require.NoError(t, err)
	_, err = n.Propose(bg, createCmd("prod", lifecycle.Paced))
	require.NoError(t, err)
	require.NoError(t, n.Snapshot())
	require.NoError(t, n.Close())

	states, err := filepath.Glob(filepath.Join(cat, snapshotsDir, "*", "state.bin"))
	require.NoError(t, err)
	require.Len(t, states, 1, "the snapshot was taken")
	var seen int
	require.NoError(t, filepath.WalkDir(cat, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		want := privateFileMode
		if d.IsDir() {
			want = privateDirMode
		}
		require.Equal(t, want, info.Mode().Perm(), path)
		seen++
		return nil
	}))
	require.GreaterOrEqual(t, seen, 7, "catalog, snapshots, old, stray, the snapshot dir, its meta and state, raft.db, server-id")
}
