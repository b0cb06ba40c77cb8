//go:build nspl_bench

package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

// percentile returns the nearest-rank percentile p (0–100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAuthorityTakeover kills the authority's member in a fresh
// 3-node cluster per trial (the domain name decides whether the authority
// also leads, so both cases occur) and reports, over 20 trials, how long
// after the kill a replacement was committed on every survivor and every
// survivor accepted a tick produced after the kill. Default timers (see
// catalog.DefaultHeartbeatTimeout), 200 ms probes of 3 attempts.
func BenchmarkAuthorityTakeover(b *testing.B) {
	const trials = 20
	for i := 0; i < b.N; i++ {
		var committed, resumed []time.Duration
		leaders := 0
		for trial := 0; trial < trials; trial++ {
			h := testcluster.New(b, testcluster.Options{})
			h.StartThree()
			leader := h.Leader().Node().Name()
			res, _ := runTakeover(b, h, fmt.Sprintf("take%d", trial), func(a, _ string) (string, bool) { return a, true })
			if res.victim == leader {
				leaders++
			}
			committed = append(committed, res.committed)
			resumed = append(resumed, res.resumed)
			_ = h.Close()
		}
		b.ReportMetric(ms(percentile(committed, 50)), "commit-p50-ms")
		b.ReportMetric(ms(percentile(committed, 99)), "commit-p99-ms")
		b.ReportMetric(ms(percentile(resumed, 50)), "resume-p50-ms")
		b.ReportMetric(ms(percentile(resumed, 99)), "resume-p99-ms")
		b.ReportMetric(float64(leaders), "leader-kills")
		b.Logf("%d trials (%d killed the leader too): replacement committed p50 %s p99 %s; ticks resumed on every survivor p50 %s p99 %s",
			trials, leaders, percentile(committed, 50), percentile(committed, 99), percentile(resumed, 50), percentile(resumed, 99))
	}
}

// BenchmarkCommitLatency3Node measures one committed command in a 3-node
// cluster, from the handler's call until the statement's completion
// boundary (every live node installed the revision): proposed on the
// leader ("leader"), and on a follower ("forwarded": forwarded to the
// leader, then applied locally). Its anchor, measured in the same run, is
// one commit of a bare 3-node hashicorp/raft cluster over the same kind of
// transport (see bareRaft3). Each iteration commits once on each of the
// three, rotating which goes first. It reports the p50 and p99 of each and
// the ratios leader/bare and follower/leader of both (goals: ≤ 3 and ≤ 2).
func BenchmarkCommitLatency3Node(b *testing.B) {
	h := testcluster.New(b, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	follower := h.Follower(leader)
	bare := newBareRaft3(b, h)
	ctx := context.Background()
	// Alternate CREATE and DROP of one domain per path, so the catalog
	// keeps its size and every iteration is one committed command.
	statement := func(m *cluster.Member, name string) func(i int) error {
		n := m.Node()
		return func(i int) error {
			var err error
			if i%2 == 0 {
				_, err = n.CreateDomain(ctx, lifecycle.CreateDomain{Name: name, Pace: lifecycle.Unpaced})
			} else {
				_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: name})
			}
			return err
		}
	}
	paths := []struct {
		name   string
		commit func(i int) error
		lat    []time.Duration
	}{
		{name: "bare", commit: func(int) error { return bare.commit() }},
		{name: "leader", commit: statement(leader, "bench-leader")},
		{name: "forwarded", commit: statement(follower, "bench-forwarded")},
	}
	i := 0
	for b.Loop() {
		for k := range paths {
			p := &paths[(i+k)%len(paths)]
			start := time.Now()
			if err := p.commit(i); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			p.lat = append(p.lat, time.Since(start))
		}
		i++
	}
	b.StopTimer()
	if i%2 == 1 {
		for _, p := range paths[1:] {
			if err := p.commit(i); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
		}
	}
	pct := map[string][2]time.Duration{}
	for _, p := range paths {
		pct[p.name] = [2]time.Duration{percentile(p.lat, 50), percentile(p.lat, 99)}
		b.ReportMetric(float64(pct[p.name][0].Microseconds()), p.name+"-p50-µs")
		b.ReportMetric(float64(pct[p.name][1].Microseconds()), p.name+"-p99-µs")
	}
	for q, unit := range []string{"p50", "p99"} {
		b.ReportMetric(float64(pct["leader"][q])/float64(pct["bare"][q]), "leader/bare-"+unit)
		b.ReportMetric(float64(pct["forwarded"][q])/float64(pct["leader"][q]), "follower/leader-"+unit)
	}
}

// BenchmarkProgressDelivery measures how long after the authority
// emitted a tick (its UTC observation) a peer had accepted it, for a 10 ms
// paced domain in a 3-node cluster on one host (one UTC clock).
func BenchmarkProgressDelivery(b *testing.B) {
	h := testcluster.New(b, testcluster.Options{})
	h.StartThree()
	d := startPaced(b, h.Member("n1"), "delivery", 10*time.Millisecond)
	var peer *cluster.Member
	for _, m := range h.Live() {
		if m.Node().Name() != d.Authority.Node {
			peer = m
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := peer.Node().WaitInstalledRevision(ctx, d.Revision); err != nil {
		b.Fatal(err)
	}
	obs, err := peer.Node().Observe("delivery")
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	var last uint64
	b.ResetTimer()
	for len(lat) < b.N {
		o := obs.Read()
		if o.Tick.ID > last {
			if last != 0 {
				lat = append(lat, time.Duration(time.Now().UnixNano()-o.Tick.AuthorityUTC))
			}
			last = o.Tick.ID
		}
		if err := obs.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds()), "p99-µs")
}
