package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

// A paced domain at TIME RATE 60: a logical minute ahead is one physical
// second away, and STOP ends every wait with a typed error.
func ExampleHandle_WaitUntil() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	src := timesource.NewFake(start)
	reg := runtime.NewRegistry(src)
	_, _ = reg.Install("prod", runtime.Lifecycle{
		State: runtime.StatePaced, Generation: 1, StartPoint: start,
		Mapping:   clock.Mapping{WallStartedAt: start, LogicalStart: start, Rate: 60},
		Period:    uint64(time.Second),
		Authority: lifecycle.AuthorityFence{Node: "n1", Incarnation: 1, Revision: 1},
	})
	h, _ := reg.Bind("prod")
	now, _ := h.Now()

	done := make(chan runtime.Snapshot)
	go func() {
		snap, _ := h.WaitUntil(context.Background(), h.Deadline(now+int64(time.Minute)))
		done <- snap
	}()
	_ = src.BlockUntil(context.Background(), 1)
	wait, _ := src.Next()
	fmt.Println("physical wait:", wait)
	src.Advance(wait)
	snap := <-done
	fmt.Println("reached:", time.Unix(0, snap.Time).UTC().Format(time.RFC3339), "generation", snap.Generation)

	_, _ = reg.Install("prod", runtime.Lifecycle{State: runtime.StateStopped, Generation: 1, StartPoint: start})
	_, err := h.Now()
	fmt.Println(errors.Is(err, runtime.ErrDomainStopped))
	// Output:
	// physical wait: 1s
	// reached: 2026-01-01T00:01:00Z generation 1
	// true
}
