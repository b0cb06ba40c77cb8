package session

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

// BenchmarkTickDelivery measures the cost of one delivered tick frame with
// many sessions attached to one paced domain: each op advances the fake
// clock one period, the authority emits one tick, and every session's
// delivery fills its slot and its consumer reads the frame. ns/frame is the
// op's time divided by the sessions it reached. Each op also runs one round
// of the anchor, a bare goroutine fan-out to as many consumers (fanout), the
// two in alternating order; fanout-ns/frame is the anchor's time per frame
// and x-fanout the ratio of the two.
func BenchmarkTickDelivery(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			e := newEnv(b, Options{})
			e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
			ctx, cancel := context.WithCancel(context.Background())
			got := make(chan struct{}, n)
			done := make(chan struct{}, n)
			sessions := make([]*Session, n)
			for i := range sessions {
				s := New(e.node, Options{Logger: quietLogger()})
				sessions[i] = s
				_, err := s.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
				require.NoError(b, err)
				go func() {
					defer func() { done <- struct{}{} }()
					for {
						if _, err := s.NextFrame(ctx); err != nil {
							return
						}
						got <- struct{}{}
					}
				}()
			}
			e.waitTick("prod", 1)
			for range n { // tick 1 reaches every session
				<-got
			}
			anchor := newFanout(n)
			defer anchor.close()
			deliver := func() time.Duration {
				start := time.Now()
				e.parked(time.Second)
				e.fake.Advance(time.Second)
				for range n {
					<-got
				}
				return time.Since(start)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var elapsed, anchored time.Duration
			for i := range b.N {
				if i%2 == 0 {
					elapsed += deliver()
					anchored += anchor.round()
				} else {
					anchored += anchor.round()
					elapsed += deliver()
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/frame")
			b.ReportMetric(float64(anchored.Nanoseconds())/float64(b.N*n), "fanout-ns/frame")
			b.ReportMetric(float64(elapsed)/float64(anchored), "x-fanout")
			cancel()
			for _, s := range sessions {
				require.NoError(b, s.Close())
			}
			for range n {
				<-done
			}
		})
	}
}

// BenchmarkIdleAttachment measures the memory one idle attachment holds:
// its record and observer and its place in its session's and fan-out's
// lists, beyond the session that holds it (its delivery task, and the
// task's context, have ended once it caught up; the domain's tick fan-out
// is shared by all of them). B/attachment is measured on a domain that was
// never started, ticking-B/attachment on the same attachments once their
// domain runs, every session has read its state and first tick frames and
// every delivery task has ended again: it adds what an attachment keeps
// after delivering, its session's reused lane buffer among it.
func BenchmarkIdleAttachment(b *testing.B) {
	e := newEnv(b, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s;")
	ctx := context.Background()
	mem := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc + ms.StackInuse
	}
	sessions := make([]*Session, b.N)
	for i := range sessions {
		sessions[i] = New(e.node, Options{Logger: quietLogger()})
		_, err := sessions[i].ExecText(ctx, "USE prod;")
		require.NoError(b, err)
	}
	b.ResetTimer()
	before := mem()
	for _, s := range sessions {
		_, err := s.ExecText(ctx, "ATTACH DOMAIN CLOCK;")
		require.NoError(b, err)
	}
	after := mem()
	b.StopTimer()
	b.ReportMetric(float64(after-before)/float64(b.N), "B/attachment")

	e.exec("USE prod; START AT NOW;")
	e.waitTick("prod", 1)
	for _, s := range sessions {
		for {
			f, err := s.NextFrame(ctx)
			require.NoError(b, err)
			if f.Kind == wire.FrameTick {
				break
			}
		}
	}
	for _, s := range sessions {
		s.mu.Lock()
		atts := slices.Clone(s.attachments)
		s.mu.Unlock()
		for _, a := range atts {
			for {
				a.mu.Lock()
				running := a.running
				a.mu.Unlock()
				if !running {
					break
				}
				runtime.Gosched()
			}
		}
	}
	ticking := mem()
	b.ReportMetric(float64(ticking-before)/float64(b.N), "ticking-B/attachment")
	for _, s := range sessions {
		require.NoError(b, s.Close())
	}
}

// fanout is the anchor of BenchmarkTickDelivery: one goroutine per
// consumer waiting on a shared broadcast, as a delivery task per attachment
// waits on its domain's progress, handing one frame to its consumer
// goroutine, which reports it as the benchmark's consumers do.
type fanout struct {
	mu    sync.Mutex
	tick  chan struct{} // closed and replaced by each round
	got   chan struct{}
	stop  chan struct{}
	tasks sync.WaitGroup
}

func newFanout(n int) *fanout {
	f := &fanout{tick: make(chan struct{}), got: make(chan struct{}, n), stop: make(chan struct{})}
	for range n {
		frames := make(chan struct{}, 1)
		f.tasks.Add(2)
		tick := f.tick // taken before the first round swaps it
		go func() {
			defer f.tasks.Done()
			for {
				select {
				case <-tick:
				case <-f.stop:
					return
				}
				// The round replaced the channel before closing this one,
				// and the next round waits for this frame: take the next
				// channel before handing the frame on.
				f.mu.Lock()
				tick = f.tick
				f.mu.Unlock()
				select {
				case frames <- struct{}{}:
				case <-f.stop:
					return
				}
			}
		}()
		go func() {
			defer f.tasks.Done()
			for {
				select {
				case <-frames:
					f.got <- struct{}{}
				case <-f.stop:
					return
				}
			}
		}()
	}
	return f
}

// round broadcasts one tick and waits until every consumer reported it.
func (f *fanout) round() time.Duration {
	start := time.Now()
	f.mu.Lock()
	tick := f.tick
	f.tick = make(chan struct{})
	f.mu.Unlock()
	close(tick)
	for range cap(f.got) {
		<-f.got
	}
	return time.Since(start)
}

func (f *fanout) close() {
	close(f.stop)
	f.tasks.Wait()
}
