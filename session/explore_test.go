package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/internal/explore"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// The explored schedules of the delivery order (the five rules of the
// specification's Delivery Order) and of monotone reads. Each schedule is
// one seed: it fixes the yields internal/explore makes at the lane, fan-out,
// attachment and observer boundaries (in an nspl_explore build), GOMAXPROCS
// (1 to 4) and the scenario's own choices (how many ticks come while an
// attach or a detach runs). `make explore` runs EXPLORE_RUNS (10,000)
// schedules per scenario in an nspl_explore build; `make test` runs a few
// in a plain build, where the yields are off. A violation names its seed and
// how to run it again.

// exploreRuns is the number of schedules per scenario: NSPL_EXPLORE_RUNS,
// or 8 (the few make test runs).
func exploreRuns(t *testing.T) int {
	if v := os.Getenv("NSPL_EXPLORE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "NSPL_EXPLORE_RUNS")
		return n
	}
	return 8
}

// exploreSeed is the first schedule's seed: NSPL_EXPLORE_SEED, or 1.
func exploreSeed(t *testing.T) uint64 {
	if v := os.Getenv("NSPL_EXPLORE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "NSPL_EXPLORE_SEED")
		return n
	}
	return 1
}

// orderCheck holds one session's stream to the five delivery-order rules,
// for every attachment, as its events arrive, and counts how often each
// rule was put to the test.
type orderCheck struct {
	domain     string
	violations []string
	tested     [6]int // by rule, 1 to 5

	replied  map[uint64]bool   // attachments whose attach reply came
	early    map[uint64]bool   // attachments with a frame before their reply
	gen      map[uint64]uint64 // the generation the newest state reported paced, 0 if not paced
	lastTick map[uint64]uint64 // the newest tick id of gen
	over     map[uint64]string // attachments after their end frame or detach reply
	attached uint64            // the attachment on the domain, for a detach
}

func newOrderCheck(domain string) *orderCheck {
	return &orderCheck{domain: domain, replied: map[uint64]bool{}, early: map[uint64]bool{},
		gen: map[uint64]uint64{}, lastTick: map[uint64]uint64{}, over: map[uint64]string{}}
}

func (c *orderCheck) violate(rule int, format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf("rule %d: ", rule)+fmt.Sprintf(format, args...))
}

// state records a reported clock of attachment a.
func (c *orderCheck) state(a uint64, o clock.Observed) {
	if o.State == clock.Paced {
		if o.Generation != c.gen[a] {
			c.gen[a], c.lastTick[a] = o.Generation, 0
		}
		return
	}
	c.gen[a], c.lastTick[a] = 0, 0
}

func (c *orderCheck) event(ev Event) {
	switch ev.Kind {
	case EventReply:
		if ev.Err != nil {
			c.violations = append(c.violations, fmt.Sprintf("request %d failed: %v", ev.ID, ev.Err))
			return
		}
		if a := ev.Result.Attachment; a != 0 && ev.Result.Clock != nil {
			c.tested[1]++
			if c.early[a] {
				c.violate(1, "a frame of attachment %d came before its attach reply", a)
			}
			c.replied[a] = true
			c.attached = a
			c.state(a, *ev.Result.Clock)
		}
		if ev.Released == c.domain && c.attached != 0 {
			c.tested[5]++
			c.over[c.attached] = "its detach reply"
			c.attached = 0
		}
	case EventFrame:
		f := ev.Frame
		a := f.Attachment
		if !c.replied[a] {
			c.early[a] = true
			c.violate(1, "%v frame of attachment %d before its attach reply", f.Kind, a)
			return
		}
		if after, ok := c.over[a]; ok {
			rule := 5
			if after == "its end frame" {
				rule = 4
			}
			c.violate(rule, "%v frame of attachment %d after %s", f.Kind, a, after)
			return
		}
		switch f.Kind {
		case wire.FrameState:
			c.state(a, f.Clock)
		case wire.FrameTick:
			c.tested[2]++
			c.tested[3]++
			switch g := c.gen[a]; {
			case g == 0:
				c.violate(2, "tick %d/%d of attachment %d while its clock was last reported not paced", f.Tick.Generation, f.Tick.ID, a)
			case f.Tick.Generation != g:
				c.violate(2, "tick of generation %d of attachment %d after a state of generation %d", f.Tick.Generation, a, g)
			case f.Tick.ID <= c.lastTick[a]:
				c.violate(3, "tick %d of attachment %d after tick %d of generation %d", f.Tick.ID, a, c.lastTick[a], g)
			default:
				c.lastTick[a] = f.Tick.ID
			}
		case wire.FrameEnd:
			c.tested[4]++
			c.over[a] = "its end frame"
		}
	}
}

// exploreEnv is a node on a fake clock with a paced domain per scenario.
type exploreEnv struct {
	*env
	period time.Duration
}

// tick lets one tick of a running paced domain come: it waits until the
// producer armed its timer for the next period and moves the clock by it.
func (x *exploreEnv) tick(ctx context.Context) error {
	if err := x.fake.BlockUntilDue(ctx, x.period); err != nil {
		return err
	}
	x.fake.Advance(x.period)
	return nil
}

// ticks lets n ticks come.
func (x *exploreEnv) ticks(ctx context.Context, n int) error {
	for range n {
		if err := x.tick(ctx); err != nil {
			return err
		}
	}
	return nil
}

// schedule is one explored schedule: it returns what was violated.
type schedule func(t *testing.T, x *exploreEnv, r *rand.Rand, seed uint64) (violations []string, tested [6]int)

// explored runs each seed's schedule of scenario, with the seed's yields
// and GOMAXPROCS, and fails at the first violation with the seed.
func explored(t *testing.T, name string, setup string, run schedule) {
	t.Helper()
	x := &exploreEnv{env: newEnv(t, Options{}), period: time.Second}
	if setup != "" {
		x.exec(setup)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runs, first := exploreRuns(t), exploreSeed(t)
	var total [6]int
	for i := range runs {
		seed := first + uint64(i)
		procs := 1 + int(seed%4)
		runtime.GOMAXPROCS(procs)
		explore.Seed(seed)
		violations, tested := run(t, x, rand.New(rand.NewPCG(seed, 0x6e73706c)), seed)
		if len(violations) > 0 {
			t.Fatalf("%s: seed %d (GOMAXPROCS %d) broke the delivery order:\n  %s\nrun it again: NSPL_EXPLORE_SEED=%d NSPL_EXPLORE_RUNS=1 go test -tags nspl_explore -run '%s' ./session",
				name, seed, procs, strings.Join(violations, "\n  "), seed, t.Name())
		}
		for r := range total {
			total[r] += tested[r]
		}
	}
	if total[0] > 0 { // a scenario of reads counts them at 0
		t.Logf("%s: %d schedules from seed %d (explore build: %v), 0 violations in %d reads",
			name, runs, first, explore.Enabled, total[0])
		return
	}
	t.Logf("%s: %d schedules from seed %d (explore build: %v), 0 violations; rule 1 tested %d times, rule 2 %d, rule 3 %d, rule 4 %d, rule 5 %d",
		name, runs, first, explore.Enabled, total[1], total[2], total[3], total[4], total[5])
}

// streamOf reads s's stream into check until the post tagged done.
func streamOf(ctx context.Context, s *Session, check *orderCheck, done string) <-chan error {
	out := make(chan error, 1)
	go func() {
		for {
			ev, err := s.Next(ctx)
			if err != nil {
				out <- err
				return
			}
			if ev.Kind == EventPost && ev.Tag == done {
				out <- nil
				return
			}
			check.event(ev)
		}
	}()
	return out
}

// submitPlans submits text's statements from id on, on their own goroutine.
func submitPlans(ctx context.Context, t *testing.T, s *Session, id uint64, text string) <-chan error {
	out := make(chan error, 1)
	go func() {
		defer close(out)
		for i, p := range mustPlans(t, text) {
			if err := s.Submit(ctx, Request{ID: id + uint64(i), Plan: p}); err != nil {
				out <- err
				return
			}
		}
	}()
	return out
}

// TestExploredDeliveryOrder: an attach while ticks come, a new generation
// (STOP and START from another session) under the attachment, and a detach
// while ticks come (rules 1, 2, 3 and 5); and an attachment whose domain is
// dropped (rules 1 and 4).
func TestExploredDeliveryOrder(t *testing.T) {
	t.Run("attach, new generation, detach", func(t *testing.T) {
		explored(t, "attach, new generation, detach", "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;",
			func(t *testing.T, x *exploreEnv, r *rand.Rand, seed uint64) ([]string, [6]int) {
				ctx := x.ctx
				s := New(x.node, Options{Logger: quietLogger(), TimeSource: x.fake})
				defer s.Close()
				check := newOrderCheck("prod")
				read := streamOf(ctx, s, check, "done")
				attached := submitPlans(ctx, t, s, 1, "USE prod; ATTACH DOMAIN CLOCK;")
				require.NoError(t, x.ticks(ctx, r.IntN(3)))
				require.NoError(t, <-attached)
				require.NoError(t, x.ticks(ctx, r.IntN(2)))
				x.exec("STOP; START AT NOW;")
				require.NoError(t, x.ticks(ctx, 1+r.IntN(2)))
				detached := submitPlans(ctx, t, s, 3, "DETACH DOMAIN CLOCK;")
				require.NoError(t, x.ticks(ctx, r.IntN(3)))
				require.NoError(t, <-detached)
				require.NoError(t, s.Post(ctx, 4, "done"))
				require.NoError(t, <-read)
				return check.violations, check.tested
			})
	})
	t.Run("attach, drop", func(t *testing.T) {
		explored(t, "attach, drop", "",
			func(t *testing.T, x *exploreEnv, r *rand.Rand, seed uint64) ([]string, [6]int) {
				ctx := x.ctx
				d := fmt.Sprintf("d%d", seed)
				x.exec(fmt.Sprintf("CREATE PACED DOMAIN %s WITH PERIOD 1s SKEW 0s; USE %s; START AT NOW;", d, d))
				s := New(x.node, Options{Logger: quietLogger(), TimeSource: x.fake})
				defer s.Close()
				check := newOrderCheck(d)
				read := streamOf(ctx, s, check, "done")
				attached := submitPlans(ctx, t, s, 1, "USE "+d+"; ATTACH DOMAIN CLOCK;")
				require.NoError(t, x.ticks(ctx, r.IntN(2)))
				require.NoError(t, <-attached)
				x.exec("STOP; DROP DOMAIN " + d + ";")
				// The end frame comes from the attachment's delivery, after
				// the drop: wait for it on the lane before the last post.
				waitEnded(ctx, t, s)
				require.NoError(t, s.Post(ctx, 3, "done"))
				require.NoError(t, <-read)
				if check.tested[4] == 0 {
					check.violations = append(check.violations, "rule 4: the dropped domain's attachment got no end frame")
				}
				return check.violations, check.tested
			})
	})
}

// waitEnded waits until every attachment of s has queued its end frame.
func waitEnded(ctx context.Context, t *testing.T, s *Session) {
	t.Helper()
	for {
		s.mu.Lock()
		ended := true
		for _, a := range s.attachments {
			// halted is set once the end frame is queued (deliver).
			a.mu.Lock()
			if !a.halted {
				ended = false
			}
			a.mu.Unlock()
		}
		s.mu.Unlock()
		if ended {
			return
		}
		select {
		case <-ctx.Done():
			require.NoError(t, ctx.Err(), "waiting for the end frame")
		default:
			runtime.Gosched()
		}
	}
}

// TestExploredMonotoneReads: readers of a paced domain's observed clock
// while ticks come and a new generation is started never read an older
// generation, nor an older tick of the same one.
func TestExploredMonotoneReads(t *testing.T) {
	explored(t, "monotone reads", "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;",
		func(t *testing.T, x *exploreEnv, r *rand.Rand, seed uint64) ([]string, [6]int) {
			ctx, cancel := context.WithCancel(x.ctx)
			var mu sync.Mutex
			var violations []string
			var reads atomic.Int64
			var wg sync.WaitGroup
			for range 2 {
				o, err := x.node.Observe("prod")
				require.NoError(t, err)
				wg.Add(1)
				go func() {
					defer wg.Done()
					var gen, id uint64
					for ctx.Err() == nil {
						obs := o.Read()
						reads.Add(1)
						g := obs.Clock.Generation
						switch {
						case g < gen:
							mu.Lock()
							violations = append(violations, fmt.Sprintf("read generation %d after generation %d", g, gen))
							mu.Unlock()
							return
						case g > gen:
							gen, id = g, 0
						}
						if obs.Tick.ID != 0 {
							if obs.Tick.ID < id {
								mu.Lock()
								violations = append(violations, fmt.Sprintf("read tick %d of generation %d after tick %d", obs.Tick.ID, g, id))
								mu.Unlock()
								return
							}
							id = obs.Tick.ID
						}
						if err := o.Wait(ctx); err != nil {
							return
						}
					}
				}()
			}
			require.NoError(t, x.ticks(ctx, 1+r.IntN(2)))
			x.exec("STOP; START AT NOW;")
			require.NoError(t, x.ticks(ctx, 1+r.IntN(2)))
			cancel()
			wg.Wait()
			return violations, [6]int{int(reads.Load())}
		})
}

// TestExplorationFindsAPlantedReordering plants a frame queued before its
// attach reply and requires the exploration to find it, naming the seed.
// The plant exists only in an nspl_explore build.
func TestExplorationFindsAPlantedReordering(t *testing.T) {
	if !explore.Enabled {
		t.Skip("planted bugs exist only in an nspl_explore build (make explore)")
	}
	explore.Plant(explore.FrameBeforeReply, true)
	defer explore.Plant(explore.FrameBeforeReply, false)
	x := &exploreEnv{env: newEnv(t, Options{}), period: time.Second}
	x.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW;")
	require.NoError(t, x.ticks(x.ctx, 1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for seed := uint64(1); seed <= 1000; seed++ {
		runtime.GOMAXPROCS(1 + int(seed%4))
		explore.Seed(seed)
		s := New(x.node, Options{Logger: quietLogger(), TimeSource: x.fake})
		check := newOrderCheck("prod")
		read := streamOf(x.ctx, s, check, "done")
		submit(t, x.ctx, s, 1, "USE prod; ATTACH DOMAIN CLOCK; DETACH DOMAIN CLOCK;")
		require.NoError(t, s.Post(x.ctx, 4, "done"))
		require.NoError(t, <-read)
		require.NoError(t, s.Close())
		if len(check.violations) > 0 {
			require.Contains(t, check.violations[0], "rule 1:")
			t.Logf("the planted reordering was found at seed %d (GOMAXPROCS %d): %s", seed, 1+seed%4, check.violations[0])
			return
		}
	}
	t.Fatal("1,000 schedules did not find a frame queued before its attach reply")
}

// mustPlans plans text, which must plan.
func mustPlans(t *testing.T, text string) []planner.Plan {
	plans, err := planner.PlanScript(text)
	require.NoError(t, err)
	return plans
}
