package catalog

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// The benchmarks put the catalog beside two baselines measured in the same
// run, both bare hashicorp/raft with the same configuration and stores
// (raft-boltdb v2 with fsync for "disk", raft's in-memory store for "mem"):
// "bare" applies the same bytes to an FSM that does nothing, and "store"
// is the smallest replicated store that does the same commits (see
// storeFSM). The catalog's cost over "bare" is decoding, applying and
// publishing the lifecycle state, and the Propose boundary; over "store",
// what it does beyond the least any store must.

// committer is one stack under measurement.
type committer interface {
	commit(i int) error
	close()
}

// benchCommands alternates a placement so every command changes the state.
func benchCommands(tb testing.TB) ([]lifecycle.Command, [][]byte) {
	cmds := []lifecycle.Command{alterCmd("bench", lifecycle.PreferColocation), alterCmd("bench", lifecycle.SuggestSeparation)}
	return cmds, [][]byte{encode(tb, cmds[0]), encode(tb, cmds[1])}
}

type catalogStack struct {
	n    *Replica
	cmds []lifecycle.Command
}

func newCatalogStack(b *testing.B, dir string) committer {
	n, err := Open(context.Background(), Config{NodeName: "bench", DataDir: dir,
		Logger: slog.New(slog.DiscardHandler), RaftLogLevel: slog.LevelWarn})
	require.NoError(b, err)
	_, err = n.Propose(context.Background(), createCmd("bench", lifecycle.Paced))
	require.NoError(b, err)
	cmds, _ := benchCommands(b)
	return &catalogStack{n: n, cmds: cmds}
}

func (s *catalogStack) commit(i int) error {
	res, err := s.n.Propose(context.Background(), s.cmds[i%2])
	if err != nil {
		return err
	}
	return res.Err()
}

func (s *catalogStack) close() { _ = s.n.Close() }

// noopFSM is the baseline's trivial state machine.
type noopFSM struct{}

func (noopFSM) Apply(*raft.Log) any                    { return nil }
func (noopFSM) Snapshot() (raft.FSMSnapshot, error)    { return noopSnapshot{}, nil }
func (noopFSM) Restore(rc io.ReadCloser) error         { return rc.Close() }
func (noopSnapshot) Persist(s raft.SnapshotSink) error { return s.Close() }
func (noopSnapshot) Release()                          {}

type noopSnapshot struct{}

// storeFSM is the state machine of the smallest store that does the
// catalog's commits: per entry it decodes the command (a key and a value,
// each copied out of the entry as a store that keeps them must), applies it
// to its map under the lock its readers take, and answers the proposer. It
// keeps no request window, publishes nothing for lock-free reads and
// notifies nobody; what the catalog does beyond it is what the "store"
// ratio measures.
type storeFSM struct {
	mu sync.RWMutex
	kv map[string]string
}

func (f *storeFSM) Apply(l *raft.Log) any {
	key, value, err := decodeKV(l.Data)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.kv[key] = value
	f.mu.Unlock()
	return nil
}

func (f *storeFSM) Snapshot() (raft.FSMSnapshot, error) { return noopSnapshot{}, nil }
func (f *storeFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

// appendKV encodes a store command: the key's length as a uvarint, the
// key, the value.
func appendKV(b []byte, key, value string) []byte {
	return append(append(binary.AppendUvarint(b, uint64(len(key))), key...), value...)
}

func decodeKV(b []byte) (key, value string, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", "", fmt.Errorf("store command of %d bytes does not decode", len(b))
	}
	return string(b[w : w+int(n)]), string(b[w+int(n):]), nil
}

type bareStack struct {
	r     *raft.Raft
	trans *raft.InmemTransport
	bolt  *raftboltdb.BoltStore
	data  [][]byte
	// encode, when set, encodes command i afresh for every commit, as a
	// store's proposer must; otherwise data is committed.
	encode func(i int) []byte
}

// newStoreStack is bare raft over a storeFSM; each commit encodes the
// domain name and placement of the catalog's command.
func newStoreStack(b *testing.B, dir string) committer {
	s := openBare(b, dir, &storeFSM{kv: make(map[string]string)})
	cmds, _ := benchCommands(b)
	s.encode = func(i int) []byte {
		p := cmds[i%2].AlterPlacement
		return appendKV(nil, p.Domain, p.Placement.String())
	}
	return s
}

func newBareStack(b *testing.B, dir string) committer {
	s := openBare(b, dir, noopFSM{})
	_, s.data = benchCommands(b)
	return s
}

// openBare opens bare raft over fsm with the catalog's raft configuration
// and stores of the same kind.
func openBare(b *testing.B, dir string, fsm raft.FSM) *bareStack {
	cfg, err := Config{NodeName: "bench"}.withDefaults()
	require.NoError(b, err)
	rc := cfg.raftConfig("bare", hclog.NewNullLogger())
	s := &bareStack{}
	var logs raft.LogStore
	var stable raft.StableStore
	var snaps raft.SnapshotStore
	if dir == "" {
		mem := raft.NewInmemStore()
		logs, stable, snaps = mem, mem, raft.NewInmemSnapshotStore()
	} else {
		s.bolt, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
		require.NoError(b, err)
		cached, err := raft.NewLogCache(logCacheSize, s.bolt)
		require.NoError(b, err)
		fss, err := raft.NewFileSnapshotStoreWithLogger(dir, 1, hclog.NewNullLogger())
		require.NoError(b, err)
		logs, stable, snaps = cached, s.bolt, fss
	}
	addr, trans := raft.NewInmemTransport("bare")
	s.trans = trans
	require.NoError(b, raft.BootstrapCluster(rc, logs, stable, snaps, trans,
		raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}))
	s.r, err = raft.NewRaft(rc, fsm, logs, stable, snaps, trans)
	require.NoError(b, err)
	require.True(b, <-s.r.LeaderCh())
	require.NoError(b, s.r.Barrier(0).Error())
	return s
}

func (s *bareStack) commit(i int) error {
	if s.encode != nil {
		f := s.r.Apply(s.encode(i), 0)
		if err := f.Error(); err != nil {
			return err
		}
		if err, ok := f.Response().(error); ok {
			return err
		}
		return nil
	}
	return s.r.Apply(s.data[i%2], 0).Error()
}

func (s *bareStack) close() {
	_ = s.r.Shutdown().Error()
	_ = s.trans.Close()
	if s.bolt != nil {
		_ = s.bolt.Close()
	}
}

var stacks = []struct {
	name string
	open func(*testing.B, string) committer
}{
	{"bare", newBareStack},
	{"store", newStoreStack},
	{"catalog", newCatalogStack},
}

func storeDir(b *testing.B, store string) string {
	if store == "disk" {
		return b.TempDir()
	}
	return ""
}

// BenchmarkCommitLatency commits one write at a time and reports the
// median and 99th percentile commit latency.
func BenchmarkCommitLatency(b *testing.B) {
	for _, store := range []string{"mem", "disk"} {
		for _, st := range stacks {
			b.Run(store+"/"+st.name, func(b *testing.B) {
				c := st.open(b, storeDir(b, store))
				defer c.close()
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					start := time.Now()
					if err := c.commit(i); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			})
		}
	}
}

// BenchmarkThroughput commits b.N writes from 1, 8 and 64 concurrent
// writers and reports commits per second.
func BenchmarkThroughput(b *testing.B) {
	for _, store := range []string{"mem", "disk"} {
		for _, writers := range []int{1, 8, 64} {
			for _, st := range stacks {
				b.Run(fmt.Sprintf("%s/writers=%d/%s", store, writers, st.name), func(b *testing.B) {
					c := st.open(b, storeDir(b, store))
					defer c.close()
					var next atomic.Int64
					var failed atomic.Value
					var wg sync.WaitGroup
					b.ResetTimer()
					start := time.Now()
					for range writers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for {
								i := next.Add(1) - 1
								if i >= int64(b.N) {
									return
								}
								if err := c.commit(int(i)); err != nil {
									failed.Store(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					elapsed := time.Since(start)
					b.StopTimer()
					if err, ok := failed.Load().(error); ok {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
				})
			}
		}
	}
}

// BenchmarkOpenToFirstWrite measures Open through the first committed
// write of a fresh embedded node (target: 100ms).
func BenchmarkOpenToFirstWrite(b *testing.B) {
	for _, store := range []string{"mem", "disk"} {
		b.Run(store, func(b *testing.B) {
			for range b.N {
				n, err := Open(context.Background(), Config{NodeName: "bench", DataDir: storeDir(b, store),
					Logger: slog.New(slog.DiscardHandler), RaftLogLevel: slog.LevelWarn})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := n.Propose(context.Background(), createCmd("bench", lifecycle.Paced)); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = n.Close()
				b.StartTimer()
			}
		})
	}
}
