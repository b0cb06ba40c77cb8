package clockrt

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

var (
	sinkTime  time.Time
	sinkInt64 int64
)

func benchHandle(b *testing.B, lc Lifecycle) *Handle {
	b.Helper()
	r := NewRegistry(timesource.System())
	if _, err := r.Install("d", lc); err != nil {
		b.Fatal(err)
	}
	h, err := r.Bind("d")
	if err != nil {
		b.Fatal(err)
	}
	return h
}

var benchLifecycles = []struct {
	name string
	lc   Lifecycle
}{
	{"paced_rate60", paced(1, 60, 0)},
	{"paced_rate1", paced(1, 1, 0)},
	{"unpaced", unpaced(1, 0)},
}

// BenchmarkTimeNow is the baseline for BenchmarkHandleNow in the same run.
func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkTime = time.Now()
	}
}

func BenchmarkHandleNow(b *testing.B) {
	for _, tt := range benchLifecycles {
		b.Run(tt.name, func(b *testing.B) {
			h := benchHandle(b, tt.lc)
			b.ReportAllocs()
			for b.Loop() {
				v, err := h.Now()
				if err != nil {
					b.Fatal(err)
				}
				sinkInt64 = v
			}
		})
	}
}

func BenchmarkTimeNowParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var t time.Time
		for pb.Next() {
			t = time.Now()
		}
		_ = t
	})
}

// BenchmarkHandleNowParallel reads one handle from every core. Reads take no
// lock and, while the wall agrees with the generation's frame, write
// nothing shared; BenchmarkProjectParallel is the projection alone.
func BenchmarkHandleNowParallel(b *testing.B) {
	for _, tt := range benchLifecycles {
		b.Run(tt.name, func(b *testing.B) {
			h := benchHandle(b, tt.lc)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := h.Now(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkProjectParallel is time.Now projected through the paced mapping
// with no installation load and no frame: what a read adds to it is the
// difference from BenchmarkHandleNowParallel/paced_rate60.
func BenchmarkProjectParallel(b *testing.B) {
	m := paced(1, 60, 0).Mapping
	src := timesource.System()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Project(src.Now()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHandleNowVsTimeNow alternates batches of time.Now and Handle.Now
// on one goroutine and reports their ratio, so that load from other
// processes affects both sides alike. ratio is Handle.Now's time over
// time.Now's; the target is at most 1.10.
func BenchmarkHandleNowVsTimeNow(b *testing.B) {
	const batch = 512
	for _, tt := range benchLifecycles {
		b.Run(tt.name, func(b *testing.B) {
			h := benchHandle(b, tt.lc)
			b.ReportAllocs()
			var base, handle time.Duration
			rounds := 0
			timeBatch := func() time.Duration {
				start := time.Now()
				for range batch {
					sinkTime = time.Now()
				}
				return time.Since(start)
			}
			handleBatch := func() time.Duration {
				start := time.Now()
				for range batch {
					v, err := h.Now()
					if err != nil {
						b.Fatal(err)
					}
					sinkInt64 = v
				}
				return time.Since(start)
			}
			for i := 0; i < b.N; i += 2 * batch {
				if rounds%2 == 0 {
					base += timeBatch()
					handle += handleBatch()
				} else {
					handle += handleBatch()
					base += timeBatch()
				}
				rounds++
			}
			n := float64(rounds * batch)
			b.ReportMetric(float64(base)/n, "timenow-ns/op")
			b.ReportMetric(float64(handle)/n, "handle-ns/op")
			b.ReportMetric(float64(handle)/float64(base), "ratio")
		})
	}
}

// BenchmarkHandleNowVsTimeNowParallel is BenchmarkHandleNowVsTimeNow on
// every core at once, all reading one handle: the ratio shows what reads of
// one generation cost each other when every core reads it.
func BenchmarkHandleNowVsTimeNowParallel(b *testing.B) {
	const batch = 512
	for _, tt := range benchLifecycles {
		b.Run(tt.name, func(b *testing.B) {
			h := benchHandle(b, tt.lc)
			b.ReportAllocs()
			var base, handle, ops atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				var tb, th time.Duration
				n := 0
				for pb.Next() {
					n++
					if n < batch {
						continue
					}
					n = 0
					start := time.Now()
					for range batch {
						sinkTimeLocal(time.Now())
					}
					mid := time.Now()
					for range batch {
						if _, err := h.Now(); err != nil {
							b.Error(err)
							return
						}
					}
					tb += mid.Sub(start)
					th += time.Since(mid)
					ops.Add(batch)
				}
				base.Add(int64(tb))
				handle.Add(int64(th))
			})
			if n := ops.Load(); n > 0 {
				b.ReportMetric(float64(base.Load())/float64(n), "timenow-ns/op")
				b.ReportMetric(float64(handle.Load())/float64(n), "handle-ns/op")
				b.ReportMetric(float64(handle.Load())/float64(base.Load()), "ratio")
			}
		})
	}
}

//go:noinline
func sinkTimeLocal(t time.Time) { _ = t }

// BenchmarkHandleNowScaling measures how Handle.Now's throughput scales
// from one core to two, against time.Now's scaling measured in the same
// run: each round times a fixed number of reads on one goroutine (with
// GOMAXPROCS 1) and on two goroutines (with GOMAXPROCS 2), for both
// clocks, in an order that alternates between rounds so that load from
// other processes affects both alike. scaling is two-core throughput over
// one-core throughput; ratio is Handle.Now's scaling over time.Now's, and
// the target is at least 0.95. GOMAXPROCS is restored before it returns.
func BenchmarkHandleNowScaling(b *testing.B) {
	const perWorker = 1 << 14
	for _, tt := range benchLifecycles {
		b.Run(tt.name, func(b *testing.B) {
			procs := goruntime.GOMAXPROCS(0)
			if goruntime.NumCPU() < 2 {
				b.Skip("needs two cores")
			}
			defer goruntime.GOMAXPROCS(procs)
			h := benchHandle(b, tt.lc)
			timeReads := func() {
				for range perWorker {
					sinkTimeLocal(time.Now())
				}
			}
			handleReads := func() {
				for range perWorker {
					if _, err := h.Now(); err != nil {
						b.Error(err)
						return
					}
				}
			}
			// run times workers goroutines doing reads at once and returns
			// the elapsed time.
			run := func(workers int, reads func()) time.Duration {
				goruntime.GOMAXPROCS(workers)
				var ready, done sync.WaitGroup
				startGate := make(chan struct{})
				for range workers {
					ready.Add(1)
					done.Go(func() {
						ready.Done()
						<-startGate
						reads()
					})
				}
				ready.Wait()
				start := time.Now()
				close(startGate)
				done.Wait()
				return time.Since(start)
			}
			var t1, t2, h1, h2 time.Duration
			rounds := 0
			for i := 0; i < b.N; i += 6 * perWorker {
				if rounds%2 == 0 {
					t1 += run(1, timeReads)
					h1 += run(1, handleReads)
					t2 += run(2, timeReads)
					h2 += run(2, handleReads)
				} else {
					h2 += run(2, handleReads)
					t2 += run(2, timeReads)
					h1 += run(1, handleReads)
					t1 += run(1, timeReads)
				}
				rounds++
			}
			// Throughput on two cores is 2×reads/t2, on one reads/t1.
			timeScaling := 2 * float64(t1) / float64(t2)
			handleScaling := 2 * float64(h1) / float64(h2)
			b.ReportMetric(timeScaling, "timenow-scaling")
			b.ReportMetric(handleScaling, "handle-scaling")
			b.ReportMetric(handleScaling/timeScaling, "ratio")
		})
	}
}
