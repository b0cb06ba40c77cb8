package nspl_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

// An embedding server creates a paced domain, follows its clock and uses it
// to choose event timestamps and waits. The fake time source makes the
// output exact; a server leaves Options.TimeSource nil for the system clock
// and passes time.Now().UnixNano() where this example passes utc.
//
// README.md shows this function's body as a complete program, and
// TestREADMEEmbeddingMatchesExample keeps the two identical.
func Example_followClock() {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	src := timesource.NewFake(start)
	eng, err := nspl.Open(ctx, nspl.Options{TimeSource: src})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	sess, err := eng.NewSession()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	results, err := sess.Exec(ctx, `
		CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;
		USE prod;
		START AT '2026-01-01T00:00:00Z' TIME RATE 60;
		ATTACH DOMAIN CLOCK;`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Println(r.Message)
	}

	// The first event is the tick the authority emitted at START.
	ev, err := sess.NextEvent(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Kind, ev.Domain, "tick", ev.Clock.Tick.ID, "at", grammar.FormatTimestamp(ev.Clock.Tick.Boundary))

	// Project the followed clock for this host's UTC, 1.5s after START.
	c, _ := sess.Clock("prod")
	utc := time.Unix(0, start).Add(1500 * time.Millisecond)
	now, _ := c.LogicalAt(utc)
	fmt.Println("logical now", now.Format(time.RFC3339Nano))
	wait, _ := c.WaitUntil(utc, time.Unix(0, start).Add(2*time.Minute))
	fmt.Println("wait until 00:02:00", wait)
	w, _ := c.Window(utc)
	fmt.Println("newest admitted center", w.Newest().Format(time.RFC3339Nano), "±", w.Skew())

	// Output:
	// created domain 'prod'
	// using domain 'prod'
	// started domain 'prod'
	// attached to the clock of domain 'prod': generation 1 paced period 1s skew 100ms origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 60
	// tick prod tick 1 at 2026-01-01T00:00:00Z
	// logical now 2026-01-01T00:01:30Z
	// wait until 00:02:00 500ms
	// newest admitted center 2026-01-01T00:01:30Z ± 100ms
}
