package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// lineSink collects written lines and lets a test wait for one.
type lineSink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLineSink() *lineSink { return &lineSink{changed: make(chan struct{})} }

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *lineSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSuffix(s.buf.String(), "\n"), "\n")
}

// waitLine waits for a complete line starting with prefix.
func (s *lineSink) waitLine(t *testing.T, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), expectTimeout)
	defer cancel()
	for {
		s.mu.Lock()
		text, ch := s.buf.String(), s.changed
		s.mu.Unlock()
		for _, l := range strings.SplitAfter(text, "\n") {
			if strings.HasSuffix(l, "\n") && strings.HasPrefix(l, prefix) {
				return
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no line starting %q; got:\n%s", prefix, text)
		}
	}
}

type clockFixture struct {
	src      timesource.Source // the engine's
	driver   *nspl.Session
	follower *nspl.Session
	out      *lineSink
	errOut   *bytes.Buffer
	main     *Main
}

// newClockFixture opens a real in-memory engine (on the system clock when
// src is nil) with a driver session that runs setup and a follower session
// for nspl clock.
func newClockFixture(t *testing.T, src timesource.Source, setup string) *clockFixture {
	t.Helper()
	if src == nil {
		src = timesource.System()
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := nspl.Open(context.Background(), nspl.Options{Logger: logger, TimeSource: src})
	require.NoError(t, err)
	driver, err := eng.NewSession()
	require.NoError(t, err)
	follower, err := eng.NewSession()
	require.NoError(t, err)
	f := &clockFixture{
		src:      src,
		driver:   driver,
		follower: follower,
		out:      newLineSink(),
		errOut:   new(bytes.Buffer),
	}
	t.Cleanup(func() {
		f.follower.Close()
		f.driver.Close()
		eng.Close()
	})
	f.main = &Main{Stdout: f.out, Stderr: f.errOut}
	if setup != "" {
		_, err := f.driver.ExecText(context.Background(), setup)
		require.NoError(t, err)
	}
	return f
}

// follows reports whether the follower session still follows the clock of
// domain: it stops once nspl clock detaches (or the attachment ends).
func (f *clockFixture) follows(domain string) bool {
	_, ok := f.follower.Clock(domain)
	return ok
}

// follow runs nspl clock on the follower session in the background.
func (f *clockFixture) follow(src timesource.Source, opts options) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.main.followClock(context.Background(), f.follower, src, opts) }()
	return done
}

func waitResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(expectTimeout):
		t.Fatal("nspl clock did not return")
		return nil
	}
}

const fastDomain = `CREATE PACED DOMAIN prod WITH PERIOD 100ms SKEW 10ms; USE prod;
	START AT '2030-01-01T00:00:00Z' TIME RATE 1000;`

func TestFollowClockUntilTicks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f := newClockFixture(t, nil, fastDomain)
	err := waitResult(t, f.follow(f.src, options{clockDomain: "prod", untilTick: 3}))
	require.NoError(t, err)
	lines := f.out.lines()
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "clock prod generation 1 paced period 100ms skew 10ms origin 2030-01-01T00:00:00Z anchor "), lines[0])
	for _, l := range lines[1:] {
		require.True(t, strings.HasPrefix(l, "tick prod generation 1 id "), l)
	}
	require.False(t, f.follows("prod"), "nspl clock detaches when it is done")
}

func TestFollowClockEndsWhenARunningClockStops(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f := newClockFixture(t, nil, fastDomain)
	done := f.follow(f.src, options{clockDomain: "prod"})
	f.out.waitLine(t, "tick prod ")
	_, err := f.driver.ExecText(context.Background(), "STOP;")
	require.NoError(t, err)
	require.NoError(t, waitResult(t, done))
	lines := f.out.lines()
	require.Equal(t, "clock prod generation 1 stopped", lines[len(lines)-1])
	require.False(t, f.follows("prod"))
}

func TestFollowClockEndsWhenTheDomainIsDropped(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	// A stopped domain that has never run does not end the wait: it may
	// start later. Dropping it does.
	f := newClockFixture(t, nil, "CREATE DOMAIN idle;")
	done := f.follow(f.src, options{clockDomain: "idle"})
	f.out.waitLine(t, "clock idle generation 0 stopped")
	_, err := f.driver.ExecText(context.Background(), "DROP DOMAIN idle;")
	require.NoError(t, err)
	require.NoError(t, waitResult(t, done))
	lines := f.out.lines()
	require.Equal(t, "end idle DomainRemoved", lines[len(lines)-1])
}

func TestFollowClockTimesOut(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f := newClockFixture(t, nil, "CREATE DOMAIN idle;")
	fake := timesource.NewFake(0)
	// --wait-start: a stopped clock is waited for, until the timeout.
	done := f.follow(fake, options{clockDomain: "idle", untilTick: 1, waitStart: true, clockTimeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), expectTimeout)
	defer cancel()
	require.NoError(t, fake.BlockUntil(ctx, 1))
	f.out.waitLine(t, "clock idle generation 0 stopped")
	fake.Advance(5*time.Second - 1)
	select {
	case err := <-done:
		t.Fatalf("returned before the timeout: %v", err)
	default:
	}
	fake.Advance(1)
	err := waitResult(t, done)
	require.ErrorIs(t, err, ErrClockTimeout)
	require.Equal(t, ExitFailed, ExitCode(err))
	require.False(t, f.follows("idle"))
}

func TestFollowClockInterruptDetaches(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f := newClockFixture(t, nil, fastDomain)
	intr := make(chan os.Signal, 1)
	f.main.Interrupts = intr
	stop := f.main.routeInterrupts(context.Background())
	defer stop()
	done := f.follow(f.src, options{clockDomain: "prod"})
	f.out.waitLine(t, "tick prod ")
	intr <- os.Interrupt
	err := waitResult(t, done)
	require.ErrorIs(t, err, ErrInterrupted)
	require.Equal(t, ExitFailed, ExitCode(err))
	require.False(t, f.follows("prod"))
}

func TestFollowClockRefusals(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	f := newClockFixture(t, nil, "")
	err := waitResult(t, f.follow(f.src, options{clockDomain: "nope"}))
	require.ErrorIs(t, err, ErrStatementFailed)
	require.True(t, reported(err))
	require.Contains(t, f.errOut.String(), "nspl clock: error: domain 'nope' does not exist")

	err = waitResult(t, f.follow(f.src, options{}))
	require.ErrorIs(t, err, ErrUsage)

	err = waitResult(t, f.follow(f.src, options{clockDomain: "a.b"}))
	require.ErrorIs(t, err, ErrUsage)
}

// scriptedClock is a clockSession whose frames are a fixed script, as a
// remote session delivers them around a lost connection, folded into a
// follow.Follow as the remote client folds them: each frame is applied
// when the reader has read the events before it.
type scriptedClock struct {
	frames []wire.Frame
	execs  []string
	follow *follow.Follow
}

func (s *scriptedClock) ExecText(_ context.Context, text string) ([]wire.Result, error) {
	s.execs = append(s.execs, text)
	if text == (planner.Attach{}).String() {
		c := s.frames[0].Clock
		s.follow.Attached("prod", 1, c)
		return []wire.Result{{Domain: "prod", Attachment: 1, Clock: &c}}, nil
	}
	return []wire.Result{{Domain: "prod"}}, nil
}

func (s *scriptedClock) NextEvent(ctx context.Context) (follow.ClockEvent, error) {
	for s.follow.Pending() == 0 && len(s.frames) > 0 {
		s.follow.Apply(s.frames[0])
		s.frames = s.frames[1:]
	}
	return s.follow.NextEvent(ctx)
}

func (s *scriptedClock) ActiveDomain() string { return "prod" }

func TestFollowClockCountsATickRepeatedAfterAReconnectOnce(t *testing.T) {
	paced := clock.Observed{Generation: 1, State: clock.Paced, Period: uint64(time.Second), Rate: 1}
	next := paced
	next.Generation = 2
	tick := func(gen, id uint64) wire.Frame {
		return wire.Frame{Domain: "prod", Attachment: 1, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: gen, ID: id}}
	}
	state := func(c clock.Observed) wire.Frame {
		return wire.Frame{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: c}
	}
	sess := &scriptedClock{follow: follow.NewFollow(ErrInterrupted), frames: []wire.Frame{
		state(paced), // consumed as the attach reply's clock
		tick(1, 7),
		state(paced), // the clock attached again on a new session
		tick(1, 7),   // the newest tick, delivered anew: not counted
		tick(1, 8),
		state(next),
		tick(2, 1), // a new generation starts again from id 1
	}}
	out := newLineSink()
	m := &Main{Stdout: out, Stderr: io.Discard}
	err := m.followClock(context.Background(), sess, timesource.System(), options{untilTick: 3, format: "plain"})
	require.NoError(t, err)
	var ids []string
	for _, l := range out.lines() {
		if strings.HasPrefix(l, "tick ") {
			ids = append(ids, strings.Join(strings.Fields(l)[1:6], " "))
		}
	}
	require.Equal(t, []string{"prod generation 1 id 7", "prod generation 1 id 8", "prod generation 2 id 1"}, ids)
}

func TestFollowClockExitsWithTheClockFailure(t *testing.T) {
	paced := clock.Observed{Generation: 3, State: clock.Paced, Period: uint64(time.Second), Rate: 1}
	failure := wire.ClockFailure{Domain: "prod", Generation: 3, Op: "project", Code: "clock_overflow",
		Cause:   "clock: project: result leaves signed unix nanoseconds",
		Message: `produce domain "prod" generation 3: domain clock projection falls outside the signed Unix-nanosecond range`}
	sess := &scriptedClock{follow: follow.NewFollow(ErrInterrupted), frames: []wire.Frame{
		{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: paced},
		{Domain: "prod", Attachment: 1, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 3, ID: 1}},
		{Domain: "prod", Attachment: 1, Kind: wire.FrameError, Failure: failure},
		{Domain: "prod", Attachment: 1, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 3, ID: 2}}, // never read
	}}
	out := newLineSink()
	var errOut strings.Builder
	m := &Main{Stdout: out, Stderr: &errOut}
	err := m.followClock(context.Background(), sess, timesource.System(), options{format: "plain"})
	require.ErrorIs(t, err, ErrStatementFailed)
	require.ErrorIs(t, err, clockrt.ErrClockOverflow, "the failure is typed")
	require.Equal(t, ExitFailed, ExitCode(err))
	require.True(t, reported(err))
	require.Equal(t, "nspl clock: error: "+failure.Message+"\n", errOut.String())
	lines := out.lines()
	// The script's first state is the attach reply's clock and its first
	// frame too.
	require.Len(t, lines, 4, "the attach reply, the state, the tick and the error frame; nothing after it")
	require.Equal(t, wire.Frame{Domain: "prod", Attachment: 1, Kind: wire.FrameError, Failure: failure}.String(), lines[3])
	require.Equal(t, []string{"ATTACH DOMAIN CLOCK;", "DETACH DOMAIN CLOCK;"}, sess.execs)
}

func TestShellFrameLineOfAClockFailure(t *testing.T) {
	failure := wire.ClockFailure{Domain: "prod", Generation: 3, Op: "project",
		Message: "produce domain \"prod\" generation 3: domain clock projection falls outside the signed Unix-nanosecond range"}
	ev := follow.ClockEvent{Domain: "prod", Attachment: 1, Kind: follow.EventError, Failure: &failure}
	require.Equal(t, `[clock prod] error: produce domain "prod" generation 3: domain clock projection falls outside the signed Unix-nanosecond range`, shellEventLine(ev))
}

func TestFrameLinesOfAnInterruption(t *testing.T) {
	in := wire.ClockFailure{Domain: "prod", Generation: 3, Op: "authority lease", Code: "clock_interrupted",
		Message: "the serving node lost contact with the cluster's leader: no contact for 1s"}
	ev := follow.ClockEvent{Domain: "prod", Attachment: 1, Kind: follow.EventInterrupted, Failure: &in}
	require.Equal(t, "[clock prod] interrupted: the serving node lost contact with the cluster's leader: no contact for 1s", shellEventLine(ev))
	require.Equal(t, "interrupted prod generation 3: the serving node lost contact with the cluster's leader: no contact for 1s", clockEventLine(ev, formatPlain))
	require.Contains(t, clockEventLine(ev, formatJSON), `"kind":"interrupted","generation":3`)
}
