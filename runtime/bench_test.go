package runtime

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/runtime/timesource"
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
// lock, but every read that advances the clock raises the generation's one
// shared watermark with a compare-and-swap, so that cache line is the only
// shared write; BenchmarkProjectParallel is the same read without it.
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
// with no installation load and no watermark: the cost the shared watermark
// adds is the difference from BenchmarkHandleNowParallel/paced_rate60.
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
// time.Now's; the target is at most 2.
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
// every core at once, all reading one handle: the ratio shows what the
// generation's shared watermark costs when every core raises it.
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
