//go:build nspl_bench

package nspl

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSoakFastPacedClock runs a paced domain with PERIOD 1ms at TIME
// RATE 1000 (one tick per physical microsecond) for 10 s of wall time on the
// system clock, with one session following it, and reports the ticks the
// session received, the heap growth between the first second and the end,
// and the CPU seconds the process used per wall second.
func BenchmarkSoakFastPacedClock(b *testing.B) {
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		eng, err := Open(ctx, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(b, err)
		sess, err := eng.NewSession()
		require.NoError(b, err)
		_, err = sess.ExecText(ctx, "CREATE PACED DOMAIN soak WITH PERIOD 1ms SKEW 0s; USE soak; START AT NOW TIME RATE 1000; ATTACH DOMAIN CLOCK;")
		require.NoError(b, err)
		received := make(chan uint64, 1)
		go func() {
			var n uint64
			for range sess.Events(ctx) {
				n++
			}
			received <- n
		}()
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		cpu := func() time.Duration {
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		wait := func(d time.Duration) {
			t := time.NewTimer(d)
			<-t.C
		}
		wait(time.Second)
		h1, c1, w1 := heap(), cpu(), time.Now()
		wait(9 * time.Second)
		h2, c2, w2 := heap(), cpu(), time.Now()
		c, _ := sess.Clock("soak")
		cancel()
		n := <-received
		require.NoError(b, eng.Close())
		b.ReportMetric(float64(n), "events")
		b.ReportMetric(float64(c.Tick.ID), "last_tick")
		b.ReportMetric(float64(int64(h2)-int64(h1)), "heap_growth_B")
		b.ReportMetric((c2-c1).Seconds()/w2.Sub(w1).Seconds(), "cpu_s/s")
	}
}
