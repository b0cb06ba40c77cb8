package catalog

import (
	"context"
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

// The benchmarks put the catalog beside a baseline measured in the same
// run: bare hashicorp/raft with the same configuration and stores
// (raft-boltdb v2 with fsync for "disk", raft's in-memory store for "mem")
// applying the same bytes to an FSM that does nothing. The catalog's cost
// over the baseline is decoding, applying and publishing the lifecycle
// state, and the Propose boundary.

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
	n    *Node
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

type bareStack struct {
	r     *raft.Raft
	trans *raft.InmemTransport
	bolt  *raftboltdb.BoltStore
	data  [][]byte
}

func newBareStack(b *testing.B, dir string) committer {
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
	s.r, err = raft.NewRaft(rc, noopFSM{}, logs, stable, snaps, trans)
	require.NoError(b, err)
	require.True(b, <-s.r.LeaderCh())
	require.NoError(b, s.r.Barrier(0).Error())
	_, s.data = benchCommands(b)
	return s
}

func (s *bareStack) commit(i int) error { return s.r.Apply(s.data[i%2], 0).Error() }

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
