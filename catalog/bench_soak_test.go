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

// runCommits commits total writes from writers goroutines and returns the
// commits per second.
func runCommits(b *testing.B, c committer, writers, total int) float64 {
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
				if err := c.commit(int(i)); err != nil {
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
	return float64(total) / time.Since(start).Seconds()
}

// BenchmarkThroughputRatio is the soak behind the throughput targets: each
// iteration commits the same number of writes through the bare raft stack,
// the minimal store (see storeFSM) and the catalog, rotating which goes
// first, and reports the catalog's throughput as a fraction of each
// baseline's: catalog/bare against raft with an FSM that does nothing,
// catalog/store against the least a store's state machine must do.
func BenchmarkThroughputRatio(b *testing.B) {
	const total = 100_000
	opens := []func(*testing.B, string) committer{newBareStack, newStoreStack, newCatalogStack}
	for _, store := range []string{"mem", "disk"} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", store, writers), func(b *testing.B) {
				var rates [3]float64 // bare, store, catalog
				for i := range b.N {
					for k := range opens {
						j := (i + k) % len(opens)
						c := opens[j](b, storeDir(b, store))
						n := total
						if store == "disk" && writers < 64 {
							n = total / 80 * writers // a few thousand fsyncs
						}
						rates[j] += runCommits(b, c, writers, n)
						c.close()
					}
				}
				bare, st, cat := rates[0], rates[1], rates[2]
				b.ReportMetric(bare/float64(b.N), "bare-commits/s")
				b.ReportMetric(st/float64(b.N), "store-commits/s")
				b.ReportMetric(cat/float64(b.N), "catalog-commits/s")
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
