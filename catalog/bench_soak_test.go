//go:build nspl_bench

package catalog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/lifecycle"
)

// runCommits commits writes from, from+1, ..., from+total-1 (commit's
// index picks the command) from writers goroutines and returns how long
// it took.
func runCommits(b *testing.B, c committer, writers, from, total int) time.Duration {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(total) {
					return
				}
				if err := c.commit(from + int(i)); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkThroughputRatio is the soak behind the throughput targets: each
// iteration opens the bare raft stack, the minimal store (see storeFSM)
// and the catalog side by side and commits the same number of writes
// through each, in ten rounds that rotate which goes first, so that a
// neighbour's load on a shared machine falls on all three alike. It
// reports the catalog's throughput as a fraction of each baseline's:
// catalog/bare against raft with an FSM that does nothing, catalog/store
// against the least a store's state machine must do.
func BenchmarkThroughputRatio(b *testing.B) {
	const total, rounds = 100_000, 10
	opens := []func(*testing.B, string) committer{newBareStack, newStoreStack, newCatalogStack}
	for _, store := range []string{"mem", "disk"} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", store, writers), func(b *testing.B) {
				n := total
				if store == "disk" && writers < 64 {
					n = total / 80 * writers // a few thousand fsyncs
				}
				var elapsed [3]time.Duration // bare, store, catalog
				for i := range b.N {
					stacks := make([]committer, len(opens))
					for j, open := range opens {
						stacks[j] = open(b, storeDir(b, store))
					}
					for r := range rounds {
						for k := range stacks {
							j := (i*rounds + r + k) % len(stacks)
							elapsed[j] += runCommits(b, stacks[j], writers, r*(n/rounds), n/rounds)
						}
					}
					for _, c := range stacks {
						c.close()
					}
				}
				rate := func(j int) float64 { return float64(b.N*rounds*(n/rounds)) / elapsed[j].Seconds() }
				bare, st, cat := rate(0), rate(1), rate(2)
				b.ReportMetric(bare, "bare-commits/s")
				b.ReportMetric(st, "store-commits/s")
				b.ReportMetric(cat, "catalog-commits/s")
				b.ReportMetric(cat/bare, "catalog/bare")
				b.ReportMetric(cat/st, "catalog/store")
			})
		}
	}
}

// BenchmarkRestartToFirstAnswer commits 100,000 writes to a catalog on disk
// (creating and dropping domains, so the state stays small and the log is
// what grows) and measures each reopen until its first write is answered:
// the figure that snapshotting by log growth and on close bounds (target:
// under 500 ms). "graceful" reopens after Close, which snapshots;
// "crash-image" reopens a copy of the data directory taken before Close, as
// a crash leaves it, so only the snapshots raft took by log growth help.
func BenchmarkRestartToFirstAnswer(b *testing.B) {
	const writes, writers = 100_000, 64
	dir := b.TempDir()
	cfg := Config{NodeName: "bench", DataDir: dir, Logger: slog.New(slog.DiscardHandler), RaftLogLevel: slog.LevelWarn}
	n, err := Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= writes {
					return
				}
				name := fmt.Sprintf("d%d", i/2)
				cmd := createCmd(name, lifecycle.Unpaced)
				if i%2 == 1 {
					cmd = lifecycle.Command{Op: lifecycle.OpDropDomain, DropDomain: &lifecycle.DropDomain{Name: name, IfExists: true}}
				}
				if _, err := n.Propose(context.Background(), cmd); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	crash := b.TempDir()
	if err := os.CopyFS(crash, os.DirFS(dir)); err != nil {
		b.Fatal(err)
	}
	if err := n.Close(); err != nil {
		b.Fatal(err)
	}

	restart := func(b *testing.B, dirFor func(i int) string) {
		for i := range b.N {
			c := cfg
			c.DataDir = dirFor(i)
			n, err := Open(context.Background(), c)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := n.Propose(context.Background(), createCmd(fmt.Sprintf("r%d", i), lifecycle.Unpaced)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := n.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/restart")
	}
	b.Run("graceful", func(b *testing.B) {
		restart(b, func(int) string { return dir })
	})
	b.Run("crash-image", func(b *testing.B) {
		restart(b, func(int) string {
			b.StopTimer()
			defer b.StartTimer()
			d := b.TempDir()
			if err := os.CopyFS(d, os.DirFS(crash)); err != nil {
				b.Fatal(err)
			}
			return d
		})
	})
}
