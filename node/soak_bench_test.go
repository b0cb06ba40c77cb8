//go:build nspl_bench

package node

import (
	"context"
	"log/slog"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPacedSoak runs a paced domain with PERIOD 1ms at TIME RATE 1000
// (one tick per physical microsecond) for 10 s of wall time on the system
// clock, with one observer following it, and reports the ticks produced,
// the heap growth and the CPU time used.
func BenchmarkPacedSoak(b *testing.B) {
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.System()})
	require.NoError(b, err)
	defer n.Close()
	_, err = n.CreateDomain(ctx, lifecycle.CreateDomain{Name: "fast", Pace: lifecycle.Paced, Period: uint64(time.Millisecond)})
	require.NoError(b, err)

	o, err := n.Observe("fast")
	require.NoError(b, err)
	o.Read()

	goruntime.GC()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	cpu0 := cpuTime()
	wall0 := time.Now()

	_, err = n.Start(ctx, "fast", planner.Start{Mode: planner.StartAtNow, Rate: 1000}.Request())
	require.NoError(b, err)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var wakes, lastID uint64
	for o.Wait(wctx) == nil {
		obs := o.Read()
		wakes++
		if obs.Tick.ID < lastID {
			b.Fatalf("tick id went back from %d to %d", lastID, obs.Tick.ID)
		}
		lastID = obs.Tick.ID
	}
	ticks := n.registry.Progress("fast").ID
	n.producers.mu.Lock()
	emitted := n.producers.running["fast"].p.Emitted()
	n.producers.mu.Unlock()
	wall := time.Since(wall0)
	cpu := cpuTime() - cpu0
	goruntime.GC()
	goruntime.ReadMemStats(&after)

	b.ReportMetric(float64(ticks), "last_tick_id")
	b.ReportMetric(float64(wakes), "observer_wakes")
	b.ReportMetric(float64(emitted), "reports_emitted")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "heap_growth_bytes")
	b.ReportMetric(cpu.Seconds(), "cpu_s")
	b.ReportMetric(wall.Seconds(), "wall_s")
	b.Logf("ticks (last id) %d, reports emitted %d, observer wakes %d, heap %d -> %d bytes, cpu %v over %v wall",
		ticks, emitted, wakes, before.HeapAlloc, after.HeapAlloc, cpu, wall)
}
