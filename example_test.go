package nspl_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nspl-dev/nspl"
)

// An embedding server opens an engine, creates and starts a paced domain,
// follows its clock, waits for a logical instant and checks which event
// timestamps the domain admits. It uses the root package alone and the
// system clock; what it prints does not depend on when it runs or how fast.
//
// README.md shows this function's body as a complete program, and
// TestREADMEEmbeddingMatchesExample keeps the two identical;
// TestEmbeddingExampleImportsTheRootAlone keeps its imports to the root.
func Example_followClock() {
	ctx := context.Background()
	eng, err := nspl.Open(ctx, nspl.Options{}) // in memory; logs warnings and errors only
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

	// Logical time starts at origin and runs ten times as fast as UTC,
	// ticking every logical hour (six minutes of UTC, so no second tick comes
	// while it runs); an event may lie 100ms from a tick.
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	results, err := sess.Exec(ctx,
		nspl.CreatePaced("Prod", time.Hour, 100*time.Millisecond),
		nspl.Use("prod"),
		nspl.Start().At(origin).Rate(10))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range results {
		fmt.Println(r.Message)
	}
	if _, err := sess.Exec(ctx, nspl.Attach()); err != nil {
		fmt.Println(err)
		return
	}

	// The first event is the tick the authority emitted at START.
	ev, err := sess.NextEvent(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Kind, ev.Domain, "tick", ev.Clock.Tick.ID, "at", ev.Clock.Tick.BoundaryTime().Format(time.RFC3339))

	// Wait until the domain's logical time reaches 00:00:05: half a second
	// of UTC at TIME RATE 10.
	target := origin.Add(5 * time.Second)
	c, _ := sess.Clock("PROD") // domain names are case-insensitive
	wait, err := c.WaitUntil(time.Now(), target)
	if err != nil {
		fmt.Println(err)
		return
	}
	time.Sleep(wait)
	now, _ := c.LogicalAt(time.Now())
	fmt.Println("reached", target.Format(time.TimeOnly), !now.Before(target))

	// The admission window at this instant: timestamps within 100ms of a
	// reached tick (here the first, at origin) are admitted, others and
	// future ones are not.
	w, err := c.Window(time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ts := range []time.Duration{50 * time.Millisecond, 500 * time.Millisecond, time.Hour} {
		fmt.Println("admits", origin.Add(ts).Format("15:04:05.000"), w.Admits(origin.Add(ts)))
	}

	// The domain runs: starting it again is refused with a root sentinel.
	_, err = sess.Exec(ctx, nspl.Start().AtNow())
	fmt.Println(errors.Is(err, nspl.ErrAlreadyRunning), err)

	// Output:
	// created domain 'prod'
	// using domain 'prod'
	// started domain 'prod'
	// tick prod tick 1 at 2026-01-01T00:00:00Z
	// reached 00:00:05 true
	// admits 00:00:00.050 true
	// admits 00:00:00.500 false
	// admits 01:00:00.000 false
	// true 1:1: domain 'prod' is already running; STOP it before starting a new generation
}
