//go:build nspl_bench

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/record"
)

// BenchmarkScaleFollower is the follower row of the scale table (make
// bench-scale): two 3-node clusters in one process, the anchor with
// scaleAnchor domains and one with N, half of each catalog running paced
// (PERIOD 1h, so producers exist but rarely tick) with authorities spread
// over the members, half stopped. Every iteration runs one statement cycle,
// CREATE, START, DESCRIBE, STOP, DROP of a fresh domain, through a follower
// of each cluster (the writes forwarded to its leader, each returning once
// the follower installed the committed revision), the order of the two
// alternating, and reports each statement's median on the big cluster and
// its ratio to the anchor's, and the 99th percentile of each.
//
// The catalogs are built through RESTORE CLUSTER … RESUME, one restore of
// scaleChunk domains at a time, each choosing its running domains'
// authorities from the live voters as that statement does.
//
// SCALE_SIZES (comma-separated) overrides the sizes.
func BenchmarkScaleFollower(b *testing.B) {
	for _, size := range followerScaleSizes(b) {
		b.Run("N="+strconv.Itoa(size), func(b *testing.B) {
			anchor := scaleCluster(b, scaleAnchor)
			big := scaleCluster(b, size)
			fa, fb := anchor.Follower(anchor.Leader()), big.Follower(big.Leader())

			tookBig, tookAnchor := map[string][]time.Duration{}, map[string][]time.Duration{}
			i := 0
			for b.Loop() {
				name := fmt.Sprintf("cycle-%d", i)
				if i%2 == 0 {
					followerCycle(b, fb, name, tookBig)
					followerCycle(b, fa, name, tookAnchor)
				} else {
					followerCycle(b, fa, name, tookAnchor)
					followerCycle(b, fb, name, tookBig)
				}
				i++
			}
			b.StopTimer()
			for _, st := range []string{"create", "start", "describe", "stop", "drop"} {
				mb, ma := percentile(tookBig[st], 50), percentile(tookAnchor[st], 50)
				b.ReportMetric(float64(mb.Nanoseconds()), st+"_ns")
				b.ReportMetric(float64(mb)/float64(ma), st+"_ratio")
				b.ReportMetric(float64(percentile(tookBig[st], 99).Nanoseconds()), st+"_p99_ns")
				b.ReportMetric(float64(percentile(tookAnchor[st], 99).Nanoseconds()), st+"_anchor_p99_ns")
			}
		})
	}
}

const (
	scaleAnchor = 100
	scaleChunk  = 1000
)

func followerScaleSizes(b *testing.B) []int {
	spec := os.Getenv("SCALE_SIZES")
	if spec == "" {
		return []int{100, 1_000, 10_000, 100_000}
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("SCALE_SIZES: %q is not a positive number of domains", f)
		}
		out = append(out, n)
	}
	return out
}

// scaleCluster starts a 3-node cluster holding count domains named
// dom-<i>, the even ones running paced and the odd ones stopped.
func scaleCluster(b *testing.B, count int) *testcluster.Cluster {
	b.Helper()
	h := testcluster.New(b, testcluster.Options{})
	b.Cleanup(func() { _ = h.Close() })
	h.StartThree()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	wall := time.Now().UnixNano()
	var batch []backup.Domain
	flush := func() {
		if len(batch) == 0 {
			return
		}
		a := backup.Archive{Version: backup.Version, CapturedAt: wall, Scope: backup.ScopeCluster, Node: "bench", Domains: batch}
		_, err := h.Leader().Node().Restore(ctx, backup.RestoreRequest{Cluster: true, Resume: true}, "bench", a)
		require.NoError(b, err)
		batch = nil
	}
	for i := range count {
		r := record.Domain{Name: fmt.Sprintf("dom-%06d", i), Pace: record.Paced, Period: uint64(time.Hour)}
		if i%2 == 0 {
			r.Status, r.Generation = record.Running, 1
			r.LastStart = record.StartPoint{Mode: record.StartAt, LogicalStart: wall, Rate: 1, WallStartedAt: wall}
			r.Mapping = &clock.Mapping{WallStartedAt: wall, LogicalStart: wall, Rate: 1}
		}
		batch = append(batch, backup.Domain{Record: r})
		if len(batch) == scaleChunk {
			flush()
		}
	}
	flush()
	return h
}

// followerCycle runs the cycle on a fresh domain through m and appends
// each statement's time to took.
func followerCycle(b *testing.B, m *cluster.Member, name string, took map[string][]time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := m.Node()
	step := func(what string, f func() error) {
		t0 := time.Now()
		err := f()
		took[what] = append(took[what], time.Since(t0))
		if err != nil {
			b.Fatalf("%s %s: %v", what, name, err)
		}
	}
	step("create", func() error {
		_, err := n.CreateDomain(ctx, lifecycle.CreateDomain{Name: name, Pace: lifecycle.Paced, Period: uint64(time.Hour)})
		return err
	})
	step("start", func() error {
		_, err := n.Start(ctx, name, planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
		return err
	})
	step("describe", func() error { _, err := n.Domain(name); return err })
	step("stop", func() error { _, err := n.Stop(ctx, name); return err })
	step("drop", func() error { _, err := n.DropDomain(ctx, lifecycle.DropDomain{Name: name}); return err })
}
