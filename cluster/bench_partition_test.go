//go:build nspl_bench

package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

// BenchmarkPartitionHandover isolates the authority's member of a fresh
// 3-node cluster per trial through the fault layer and reports, over the
// trials, what the authority lease costs a handover: how long after the
// cut the isolated member stopped vouching (its clients' interrupted
// frame), the gap in the authority's UTC between the last tick the
// isolated authority produced and the first its replacement produced, how
// long after the cut that first tick came (the gap a follower of the clock
// on the majority sees), and how long after the heal the isolated member
// caught up. The gap is also
// reported as a ratio to the fence wait of the same configuration
// (catalog.FenceWait), its stated part.
func BenchmarkPartitionHandover(b *testing.B) {
	const trials = 8
	const bound = 60 * time.Second
	fence := catalog.FenceWait(catalog.DefaultAuthorityLease)
	for i := 0; i < b.N; i++ {
		var stopped, gaps, resumed, caught []time.Duration
		for trial := 0; trial < trials; trial++ {
			h := testcluster.New(b, testcluster.Options{Faults: true})
			h.StartThree()
			names := h.Names()
			log := &productionLog{}
			for _, m := range h.Live() {
				log.watch(m)
			}
			domain := fmt.Sprintf("part%d", trial)
			d := startPaced(b, h.Follower(h.Leader()), domain, 20*time.Millisecond)
			victim := h.Member(d.Authority.Node)
			var other *cluster.Member
			for _, m := range h.Live() {
				if m != victim {
					other = m
				}
			}
			h.Eventually(bound, "ticks on every member", func() bool {
				for _, m := range h.Live() {
					if _, ok := tickedBy(m, domain, d.Authority); !ok {
						return false
					}
				}
				return true
			})
			cutAt := time.Now()
			h.Net().Isolate(victim.Node().Name(), names...)
			stopped = append(stopped, h.Eventually(bound, "the isolated member stops vouching", func() bool { return !victim.Node().Vouches() }))
			var moved lifecycle.Domain
			h.Eventually(bound, "a tick of the new authority", func() bool {
				moved = domainOn(b, other, domain)
				if !moved.Authority.Assigned() || moved.Authority == d.Authority {
					return false
				}
				_, ok := tickedBy(other, domain, moved.Authority)
				return ok
			})
			var lastOld, firstNew int64
			for _, p := range log.all() {
				switch {
				case p.domain != domain:
				case p.fence == d.Authority:
					lastOld = max(lastOld, p.authority)
				case p.fence == moved.Authority && (firstNew == 0 || p.authority < firstNew):
					firstNew = p.authority
				}
			}
			gaps = append(gaps, time.Duration(firstNew-lastOld))
			resumed = append(resumed, time.Duration(firstNew-cutAt.UnixNano()))
			healAt := time.Now()
			h.Net().Heal()
			h.Eventually(bound, "the isolated member caught up", func() bool {
				return victim.Node().Vouches() && victim.Node().Installation(domain).Authority() == moved.Authority
			})
			caught = append(caught, time.Since(healAt))
			_ = h.Close()
		}
		b.ReportMetric(ms(percentile(stopped, 50)), "stopped-p50-ms")
		b.ReportMetric(ms(percentile(stopped, 99)), "stopped-p99-ms")
		b.ReportMetric(ms(percentile(gaps, 50)), "gap-p50-ms")
		b.ReportMetric(ms(percentile(gaps, 99)), "gap-p99-ms")
		b.ReportMetric(float64(percentile(gaps, 50))/float64(fence), "gap-p50/fence-wait")
		b.ReportMetric(ms(percentile(resumed, 50)), "cut-to-new-tick-p50-ms")
		b.ReportMetric(ms(percentile(resumed, 99)), "cut-to-new-tick-p99-ms")
		b.ReportMetric(ms(percentile(caught, 50)), "catchup-p50-ms")
		b.ReportMetric(ms(percentile(caught, 99)), "catchup-p99-ms")
		b.Logf("%d trials, fence wait %s: stopped vouching p50 %s p99 %s after the cut; production gap p50 %s p99 %s; first tick of the new authority p50 %s p99 %s after the cut; caught up p50 %s p99 %s after the heal",
			trials, fence, percentile(stopped, 50), percentile(stopped, 99), percentile(gaps, 50), percentile(gaps, 99),
			percentile(resumed, 50), percentile(resumed, 99), percentile(caught, 50), percentile(caught, 99))
	}
}
