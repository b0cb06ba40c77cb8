package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake UTC every test starts at: 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openNode(t *testing.T, fake *timesource.Fake, dir string) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{DataDir: dir, Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	return n
}

// steps returns the lifecycle requests of queued plans, as a session hands
// them to CommitTransaction and PreflightTransaction.
func steps(plans ...planner.Plan) []lifecycle.StepRequest {
	out := make([]lifecycle.StepRequest, len(plans))
	for i, p := range plans {
		out[i] = planner.Step(p)
	}
	return out
}

func paced(name string, period, skew time.Duration) lifecycle.CreateDomain {
	return lifecycle.CreateDomain{Name: name, Pace: lifecycle.Paced, Period: uint64(period), Skew: uint64(skew)}
}

// waitTick waits, on the observer's notifications and never on a sleep,
// until the domain's accepted tick reaches id.
func waitTick(t *testing.T, n *Node, domain string, id uint64) clockrt.Observation {
	t.Helper()
	o, err := n.Observe(domain)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		obs := o.Read()
		if obs.Tick.ID >= id {
			return obs
		}
		require.NoError(t, o.Wait(ctx), "waiting for tick %d of %q, have %+v", id, domain, obs)
	}
}

// parked waits until the domain's producer, after emitting its latest
// tick, has armed its timer for the next one, due d from now. An Advance
// before that would land between the emission and the arming, and the
// timer, armed past the advanced time, would never fire. The wait names the
// deadline rather than counting timers because the catalog arms a retry
// timer of its own on the same clock now and then.
func parked(t *testing.T, fake *timesource.Fake, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, fake.BlockUntilDue(ctx, d), "waiting for the producer to arm its timer")
}

func TestLifecycleThroughHandler(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	require.NoError(t, n.WaitInstalled(ctx))

	out, err := n.CreateDomain(ctx, paced("prod", time.Second, 100*time.Millisecond))
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.Equal(t, clockrt.StateStopped, n.registry.Current("prod").State())

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	require.EqualError(t, err, "domain 'prod' already exists; use CREATE DOMAIN IF NOT EXISTS or choose another name")

	out, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: 1000, Rate: 60}.Request())
	require.NoError(t, err)
	require.Equal(t, uint64(1), out.Domain.Generation)
	in := n.registry.Current("prod")
	require.Equal(t, clockrt.StatePaced, in.State())
	m, _ := in.Mapping()
	require.Equal(t, clock.Mapping{WallStartedAt: t0, LogicalStart: 1000, Rate: 60}, m)
	require.Equal(t, n.Identity(), in.Authority().Identity())

	obs := waitTick(t, n, "prod", 1)
	require.Equal(t, clockrt.Tick{Generation: 1, ID: 1, Boundary: 1000, AuthorityUTC: t0}, obs.Tick)

	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	require.Equal(t, clockrt.StateStopped, n.registry.Current("prod").State())
	require.Equal(t, clockrt.Tick{}, n.registry.Progress("prod"))

	out, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	require.Equal(t, uint64(2), out.Domain.Generation)
	obs = waitTick(t, n, "prod", 1)
	require.Equal(t, uint64(2), obs.Tick.Generation)

	_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "prod"})
	require.ErrorIs(t, err, lifecycle.ErrDomainRunning)
	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "prod"})
	require.NoError(t, err)
	require.Equal(t, clockrt.StateMissing, n.registry.Current("prod").State())
	_, err = n.Domain("prod")
	require.True(t, errors.Is(err, lifecycle.ErrDomainNotFound))
}

// waitFor waits on the installation counter, never on a sleep, until cond
// holds.
func waitFor(t *testing.T, n *Node, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, ch := n.Installed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestReopenKeepsMappingAndResumesTicks(t *testing.T) {
	dir := t.TempDir()
	fake := timesource.NewFake(t0)
	ctx := context.Background()

	n := openNode(t, fake, dir)
	_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	before, err := n.Domain("prod")
	require.NoError(t, err)
	first := n.Identity()
	require.Equal(t, first, before.Authority.Identity())
	waitTick(t, n, "prod", 1)
	parked(t, fake, time.Second)
	fake.Advance(5 * time.Second)
	require.Equal(t, uint64(6), waitTick(t, n, "prod", 6).Tick.ID)
	require.NoError(t, n.Close())

	fake.Advance(10 * time.Second)
	n = openNode(t, fake, dir)
	defer func() { require.NoError(t, n.Close()) }()
	require.NotEqual(t, first.Incarnation, n.Identity().Incarnation, "a reopen is a new incarnation")
	after, err := n.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, before.Generation, after.Generation)
	require.Equal(t, before.LastStart, after.LastStart)
	require.Equal(t, *before.Mapping, *after.Mapping)

	// The leader's reconciliation moves the authority to this incarnation;
	// its producer reconstructs the frontier from the unchanged mapping.
	waitFor(t, n, "the authority to move to the new incarnation", func() bool {
		return n.registry.Current("prod").Authority().Identity() == n.Identity()
	})
	obs := waitTick(t, n, "prod", 16)
	require.Equal(t, clockrt.Tick{Generation: 1, ID: 16, Boundary: t0 + 15*int64(time.Second), AuthorityUTC: t0 + 15*int64(time.Second)}, obs.Tick)
	var fence clockrt.ProducerFence
	waitProducer(t, n, "prod", "this incarnation's producer", func(f clockrt.ProducerFence, ok bool) bool {
		fence = f
		return ok && f.Authority.Identity() == n.Identity()
	})
	require.Greater(t, fence.Authority.Revision, before.Authority.Revision)
}

// waitProducer waits on the producer set's reconciliations until cond
// holds for the domain's producer.
func waitProducer(t *testing.T, n *Node, domain, what string, cond func(clockrt.ProducerFence, bool) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		f, ok, ch := n.producers.fence(domain)
		if cond(f, ok) {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// reconciled waits, while no retirement is under way, until the producer
// set has reconciled with every installation made before it was called:
// the pass it asks for starts after the channel it waits on was taken.
func reconciled(t *testing.T, n *Node) {
	t.Helper()
	_, _, ch := n.producers.fence("")
	n.producers.wake()
	waitClosed(t, ch, "the producer set to reconcile")
}

// reportLog records every report the node's producers emit.
type reportLog struct {
	mu   sync.Mutex
	reps []clockrt.ProgressReport
}

func (l *reportLog) add(_ context.Context, r clockrt.ProgressReport) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reps = append(l.reps, r)
}

func (l *reportLog) all() []clockrt.ProgressReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]clockrt.ProgressReport(nil), l.reps...)
}

func TestProducerRetiredBeforeSuccessor(t *testing.T) {
	fake := timesource.NewFake(t0)
	var log reportLog
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake, OnProgress: log.add})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "prod", 1)
	parked(t, fake, time.Second)
	fake.Advance(time.Second)
	waitTick(t, n, "prod", 2)

	// STOP retires it; nothing is produced while stopped.
	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	waitProducer(t, n, "prod", "the producer to retire", func(_ clockrt.ProducerFence, ok bool) bool { return !ok })
	fake.Advance(time.Second)

	// A new generation gets a new producer.
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	require.Equal(t, uint64(2), waitTick(t, n, "prod", 1).Tick.Generation)

	// Revoking the authority (a fence change within the generation): the
	// leader reassigns it to this incarnation at a later revision, and a
	// successor producer starts under that fence.
	d, err := n.Domain("prod")
	require.NoError(t, err)
	res, err := n.catalog.Propose(ctx, lifecycle.Command{Op: lifecycle.OpReassignAuthority, ReassignAuthority: &lifecycle.ReassignAuthority{
		Domain: "prod", ExpectedGeneration: d.Generation, ExpectedFence: d.Authority,
	}})
	require.NoError(t, err)
	require.NoError(t, res.Err())
	waitProducer(t, n, "prod", "the authority to be reassigned", func(f clockrt.ProducerFence, ok bool) bool {
		return ok && f.Authority.Revision >= d.Authority.Revision+2
	})
	parked(t, fake, time.Second)
	fake.Advance(time.Second)
	waitTick(t, n, "prod", 2)

	// STOP; START in one commit: the domain stays paced under this
	// incarnation, and only the fence's generation and mapping change.
	out, err := n.CommitTransaction(ctx, "prod", steps(
		planner.Stop{}, planner.Start{Mode: planner.StartAtNow, Rate: 1},
	))
	require.NoError(t, err)
	require.Equal(t, uint64(3), out.Domain.Generation)
	require.Equal(t, uint64(3), waitTick(t, n, "prod", 1).Tick.Generation)

	reps := log.all()
	require.NotEmpty(t, reps)
	type fenceKey struct{ gen, rev uint64 }
	seen := map[fenceKey]bool{}
	prev := fenceKey{}
	for _, r := range reps {
		k := fenceKey{r.Generation, r.Authority.Revision}
		require.Equal(t, n.Identity(), r.Authority.Identity())
		if k != prev {
			require.False(t, seen[k], "a report of fence %+v after its successor started", k)
			require.True(t, k.gen > prev.gen || (k.gen == prev.gen && k.rev > prev.rev), "fences only move forward: %+v after %+v", k, prev)
			seen[prev] = true
			prev = k
		}
	}
	require.GreaterOrEqual(t, len(seen), 4, "generation 1, generation 2, its reassigned fence and generation 3")
}

func TestTransactionsThroughHandler(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()

	_, err := n.CommitTransaction(ctx, "prod", steps(planner.Stop{}))
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: 0, Rate: 2}.Request())
	require.NoError(t, err)
	fake.Advance(10 * time.Second)

	// STOP; START; in one commit resumes from the domain time at the step
	// boundary with the previous rate, as one revision.
	before, err := n.Domain("prod")
	require.NoError(t, err)
	out, err := n.CommitTransaction(ctx, "prod", steps(
		planner.Stop{}, planner.Start{Mode: planner.StartResume, Rate: planner.DefaultRate},
		planner.AlterPlacement{Placement: lifecycle.PreferColocation},
	))
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.Equal(t, before.Revision+1, out.Revision)
	require.Equal(t, uint64(2), out.Domain.Generation)
	require.Equal(t, lifecycle.PreferColocation, out.Domain.Placement)
	require.Equal(t, int64(20*time.Second), out.Domain.LastStart.LogicalStart)
	require.Equal(t, 2.0, out.Domain.LastStart.Rate)
	require.Equal(t, clockrt.StatePaced, n.registry.Current("prod").State())
	require.Equal(t, uint64(2), n.registry.Current("prod").Generation())

	// A refused step refuses the whole transaction.
	_, err = n.CommitTransaction(ctx, "prod", steps(planner.Stop{}, planner.Stop{}))
	require.ErrorIs(t, err, lifecycle.ErrAlreadyStopped)
	require.Equal(t, 2, lifecycle.AsError(err).Step)
	require.Equal(t, clockrt.StatePaced, n.registry.Current("prod").State())

	_, err = n.CommitTransaction(ctx, "prod", steps(planner.Stop{}, planner.Use{Name: "x"}))
	require.ErrorIs(t, err, ErrNotTransactional)
	require.Contains(t, err.Error(), "step 2")

	out, err = n.CommitTransaction(ctx, "prod", nil)
	require.NoError(t, err)
	require.False(t, out.Changed)
}

func TestHandlerRefusals(t *testing.T) {
	fake := timesource.NewFake(t0)
	ctx := context.Background()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake,
		Available: func(*lifecycle.State) []lifecycle.NodeIncarnation { return nil }})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.NoError(t, err)
	_, err = n.CreateDomain(ctx, lifecycle.CreateDomain{Name: "flat"})
	require.NoError(t, err)

	cases := []struct {
		name string
		run  func() error
		want error
		msg  string
	}{
		{name: "start without live voter", run: func() error {
			_, err := n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			return err
		}, want: lifecycle.ErrNoLiveVoter, msg: "no live voter is available to own the clock for domain 'prod'"},
		{name: "start missing", run: func() error { _, err := n.Start(ctx, "nope", planner.Start{}.Request()); return err },
			want: lifecycle.ErrDomainNotFound, msg: "domain 'nope' does not exist"},
		{name: "stop stopped", run: func() error { _, err := n.Stop(ctx, "prod"); return err },
			want: lifecycle.ErrAlreadyStopped, msg: "domain 'prod' is already stopped"},
		{name: "stop missing", run: func() error { _, err := n.Stop(ctx, "nope"); return err },
			want: lifecycle.ErrDomainNotFound, msg: "domain 'nope' does not exist"},
		{name: "drop missing", run: func() error { _, err := n.DropDomain(ctx, lifecycle.DropDomain{Name: "nope"}); return err },
			want: lifecycle.ErrDomainNotFound, msg: "domain 'nope' does not exist"},
		{name: "alter missing", run: func() error {
			_, err := n.AlterPlacement(ctx, "nope", lifecycle.RequireColocation)
			return err
		}, want: lifecycle.ErrDomainNotFound, msg: "domain 'nope' does not exist"},
		{name: "start running", run: func() error {
			if _, err := n.Start(ctx, "flat", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request()); err != nil {
				return err
			}
			_, err := n.Start(ctx, "flat", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			return err
		}, want: lifecycle.ErrAlreadyRunning, msg: "domain 'flat' is already running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			require.ErrorIs(t, err, tc.want)
			var le *lifecycle.Error
			require.ErrorAs(t, err, &le)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	// IF EXISTS / IF NOT EXISTS are quiet no-ops.
	out, err := n.DropDomain(ctx, lifecycle.DropDomain{Name: "nope", IfExists: true})
	require.NoError(t, err)
	require.False(t, out.Changed)
	out, err = n.CreateDomain(ctx, lifecycle.CreateDomain{Name: "prod", IfNotExists: true})
	require.NoError(t, err)
	require.False(t, out.Changed)
	require.Equal(t, lifecycle.Paced, out.Domain.Pace, "the existing definition is kept")

	// The unpaced domain started: unpaced clock, no producer, once the
	// producer set has reconciled with that installation.
	require.Equal(t, clockrt.StateUnpaced, n.registry.Current("flat").State())
	reconciled(t, n)
	_, ok := n.Producing("flat")
	require.False(t, ok)
	names := []string{}
	for _, d := range n.Domains() {
		names = append(names, d.Name)
	}
	require.Equal(t, []string{"flat", "prod"}, names)
	out, err = n.AlterPlacement(ctx, "prod", lifecycle.RequireColocation)
	require.NoError(t, err)
	require.Equal(t, lifecycle.RequireColocation, out.Domain.Placement)
}

func TestInstalledCounter(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	count, rev, _ := n.Installed()
	require.GreaterOrEqual(t, count, uint64(1), "Open returns after the first installation")
	require.Equal(t, n.catalog.Revision(), rev)
	require.NoError(t, n.WaitInstalled(context.Background()))

	out, err := n.CreateDomain(context.Background(), paced("prod", time.Second, 0))
	require.NoError(t, err)
	count2, rev2, _ := n.Installed()
	require.Greater(t, count2, count)
	require.GreaterOrEqual(t, rev2, out.Revision)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, n.WaitInstalledRevision(ctx, rev2+100), context.Canceled)
	require.NoError(t, n.WaitInstalledRevision(ctx, rev2), "an installed revision needs no wait")
}

// TestOlderRevisionNeverInstalled delivers, late, a catalog state older
// than the one the node installed: the node keeps every domain as the newer
// revision left it. Its per-domain revisions alone could not: a domain the
// older state lacks would be removed, and one dropped since would come back.
func TestOlderRevisionNeverInstalled(t *testing.T) {
	cases := []struct {
		name string
		late func(empty, created *lifecycle.State) *lifecycle.State
	}{
		{"before either domain existed", func(empty, _ *lifecycle.State) *lifecycle.State { return empty }},
		{"both domains created, neither started nor dropped", func(_, created *lifecycle.State) *lifecycle.State { return created }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := timesource.NewFake(t0)
			n := openNode(t, fake, "")
			defer func() { require.NoError(t, n.Close()) }()
			ctx := context.Background()
			empty := n.catalog.State()
			_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
			require.NoError(t, err)
			_, err = n.CreateDomain(ctx, paced("gone", time.Second, 0))
			require.NoError(t, err)
			created := n.catalog.State()
			_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
			_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "gone"})
			require.NoError(t, err)
			prod := n.registry.Current("prod")
			require.Equal(t, clockrt.StatePaced, prod.State())
			_, installed, _ := n.Installed()

			late := c.late(empty, created)
			require.Less(t, late.Revision(), installed)
			n.onChange(catalog.Change{Revision: late.Revision(), State: late})
			require.Same(t, prod, n.registry.Current("prod"), "the running domain keeps its installation")
			require.Equal(t, []string{"prod"}, n.registry.Domains(), "the dropped domain stays dropped")
			_, rev, _ := n.Installed()
			require.Equal(t, installed, rev, "the installed revision never goes back")
		})
	}
}
