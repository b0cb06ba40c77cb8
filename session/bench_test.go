package session

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkTickDelivery measures the cost of one delivered tick frame with
// many sessions attached to one paced domain: each op advances the fake
// clock one period, the authority emits one tick, and every session's
// delivery task fills its slot and its consumer reads the frame. ns/frame is
// the op's time divided by the sessions it reached.
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
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				e.parked(time.Second)
				e.fake.Advance(time.Second)
				for range n {
					<-got
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/frame")
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
// its record, observer, delivery task and the task's stack, beyond the
// session that holds it.
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
	for _, s := range sessions {
		require.NoError(b, s.Close())
	}
}
