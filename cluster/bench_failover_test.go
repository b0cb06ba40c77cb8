//go:build nspl_bench

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// BenchmarkFailoverUnderLoad answers, from one run on a machine whose
// cores are each kept busy by a shell loop (`sh -c 'while :; do :; done'`,
// one per core, as make stress runs them), both halves of the failover
// trade-off of the default timing (catalog.DefaultHeartbeatTimeout,
// DefaultAuthorityLease):
//
//   - stability: a 3-node cluster running a 20 ms paced domain, left alone
//     for FAILOVER_WINDOW (default 60s): how many elections it held
//     (a confirmed leader after none, or another one) and how many times a
//     member's authority lease lapsed, each per minute;
//   - takeover: FAILOVER_TRIALS (default 20) fresh clusters in which the
//     leader is also the authority of a 20 ms paced domain that a session
//     on a follower is attached to; the leader is killed, and the time from
//     the kill until a survivor's committed catalog names a new live
//     authority (takeover-commit) and until the attached session receives a
//     tick of that authority (takeover-tick), p50 and p99 (nearest rank),
//     with the part of it until a survivor was the confirmed leader
//     (elected).
//
// The busy loops end with the benchmark.
func BenchmarkFailoverUnderLoad(b *testing.B) {
	window := envDuration(b, "FAILOVER_WINDOW", time.Minute)
	trials := envInt(b, "FAILOVER_TRIALS", 20)
	loops := runtime.NumCPU()
	for i := 0; i < b.N; i++ {
		stop := busyLoops(b, loops)
		elections, lapses := stabilityWindow(b, window)
		var elected, committed, ticked []time.Duration
		for trial := 0; trial < trials; trial++ {
			e, c, t := leaderKillTrial(b, trial)
			elected = append(elected, e)
			committed = append(committed, c)
			ticked = append(ticked, t)
		}
		stop()
		perMinute := func(n int) float64 { return float64(n) / window.Minutes() }
		b.ReportMetric(perMinute(elections), "elections/min")
		b.ReportMetric(perMinute(lapses), "lease-lapses/min")
		b.ReportMetric(ms(percentile(elected, 50)), "elected-p50-ms")
		b.ReportMetric(ms(percentile(elected, 99)), "elected-p99-ms")
		b.ReportMetric(ms(percentile(committed, 50)), "takeover-commit-p50-ms")
		b.ReportMetric(ms(percentile(committed, 99)), "takeover-commit-p99-ms")
		b.ReportMetric(ms(percentile(ticked, 50)), "takeover-tick-p50-ms")
		b.ReportMetric(ms(percentile(ticked, 99)), "takeover-tick-p99-ms")
		b.Logf("%d busy loops; %s window: %d elections, %d lease lapses; %d leader kills: a survivor led p50 %s p99 %s, new authority committed p50 %s p99 %s, its first tick to an attached client p50 %s p99 %s",
			loops, window, elections, lapses, trials, percentile(elected, 50), percentile(elected, 99),
			percentile(committed, 50), percentile(committed, 99), percentile(ticked, 50), percentile(ticked, 99))
	}
}

// busyLoops starts n shell busy loops and returns the function that ends
// them (also run when the benchmark ends).
func busyLoops(b *testing.B, n int) func() {
	b.Helper()
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.Fatalf("start a busy loop: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			for _, cmd := range cmds {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
	}
	b.Cleanup(stop)
	return stop
}

// stabilityWindow runs a 3-node cluster with a running paced domain for
// window and returns how many elections it held after the one that
// bootstrapped it, and how many times a member stopped vouching. It polls
// every member every 2 ms: an election leaves the cluster without a
// confirmed leader for at least a heartbeat timeout (the new leader
// confirms its term before it counts), far longer than a poll.
func stabilityWindow(b *testing.B, window time.Duration) (elections, lapses int) {
	b.Helper()
	h := testcluster.New(b, testcluster.Options{})
	defer func() { _ = h.Close() }()
	h.StartThree()
	startPaced(b, h.Follower(h.Leader()), "steady", 20*time.Millisecond)
	members := h.Live()
	vouched := make([]bool, len(members))
	for i := range vouched {
		vouched[i] = true
	}
	var leader string
	first := true
	for end := time.Now().Add(window); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		now := ""
		for i, m := range members {
			if m.Node().IsLeader() && now == "" {
				now = m.Node().Name()
			}
			v := m.Node().Vouches()
			if vouched[i] && !v {
				lapses++
			}
			vouched[i] = v
		}
		switch {
		case now == "":
			leader = "" // between terms: the next confirmed leader is a new election
		case first:
			first, leader = false, now
		case now != leader:
			elections++
			leader = now
		}
	}
	return elections, lapses
}

// leaderKillTrial starts a fresh 3-node cluster whose leader is the
// authority of a paced domain, attaches a session on a follower to it,
// kills the leader, and returns how long after the kill a survivor's
// member was the confirmed leader, its committed catalog named a new live
// authority, and the attached session received that authority's first
// tick.
func leaderKillTrial(b *testing.B, trial int) (elected, committed, ticked time.Duration) {
	b.Helper()
	const bound = time.Minute
	h := testcluster.New(b, testcluster.Options{})
	defer func() { _ = h.Close() }()
	h.StartThree()
	leader := h.Leader()
	follower := h.Follower(leader)
	var d lifecycle.Domain
	for k := 0; ; k++ {
		if k == 24 {
			b.Fatal("no domain name put the authority on the leader")
		}
		d = startPaced(b, follower, fmt.Sprintf("kill%d_%d", trial, k), 20*time.Millisecond)
		if d.Authority.Node == leader.Node().Name() {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	s := session.New(follower.Node(), session.Options{})
	defer func() { _ = s.Close() }()
	if _, err := s.ExecText(ctx, "USE "+d.Name+"; ATTACH DOMAIN CLOCK;"); err != nil {
		b.Fatal(err)
	}
	frames := &frameLog{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	frames.follow(ctx, s, &wg)
	h.Eventually(bound, "the old authority's ticks on the attached session", func() bool {
		_, _, ok := frames.first(0, func(f wire.Frame) bool { return f.Kind == wire.FrameTick })
		return ok
	})
	victim := leader.Node().Name()
	killedAt := time.Now()
	h.Kill(victim)
	dead := time.Now().UnixNano() // the old authority produces nothing after this
	var moved lifecycle.Domain
	h.Eventually(bound, "a committed live replacement", func() bool {
		if elected == 0 {
			for _, m := range h.Live() {
				if m.Node().IsLeader() {
					elected = time.Since(killedAt)
				}
			}
		}
		moved = domainOn(b, follower, d.Name)
		return moved.Authority.Assigned() && moved.Authority.Node != victim && h.Member(moved.Authority.Node) != nil
	})
	committed = time.Since(killedAt)
	h.Eventually(bound, "the new authority's tick on the attached session", func() bool {
		_, at, ok := frames.first(0, func(f wire.Frame) bool {
			return f.Kind == wire.FrameTick && f.Tick.AuthorityUTC > dead
		})
		ticked = at.Sub(killedAt)
		return ok
	})
	if elected == 0 {
		elected = committed // the replacement committed in the same poll
	}
	return elected, committed, ticked
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a positive duration such as 60s", name, v)
	}
	return d
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}
