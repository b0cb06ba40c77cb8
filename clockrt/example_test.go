package clockrt_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// A paced domain at TIME RATE 60: a logical minute ahead is one physical
// second away, and STOP ends every wait with a typed error.
func ExampleHandle_WaitUntil() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	src := timesource.NewFake(start)
	reg := clockrt.NewRegistry(src)
	_, _ = reg.Install("prod", clockrt.Lifecycle{
		State: clockrt.StatePaced, Generation: 1, StartPoint: start,
		Mapping:   clock.Mapping{WallStartedAt: start, LogicalStart: start, Rate: 60},
		Period:    uint64(time.Second),
		Authority: lifecycle.AuthorityFence{Node: "n1", Incarnation: 1, Revision: 1},
	})
	h, _ := reg.Bind("prod")
	now, _ := h.Now()

	done := make(chan clockrt.Snapshot)
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

	_, _ = reg.Install("prod", clockrt.Lifecycle{State: clockrt.StateStopped, Generation: 1, StartPoint: start})
	_, err := h.Now()
	fmt.Println(errors.Is(err, clockrt.ErrDomainStopped))
	// Output:
	// physical wait: 1s
	// reached: 2026-01-01T00:01:00Z generation 1
	// true
}
