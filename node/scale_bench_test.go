//go:build nspl_bench

package node

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// The scale table (make bench-scale). Each BenchmarkScale/N=<n> holds two
// embedded nodes open in the same process: the anchor, a catalog of
// scaleAnchor domains, and one of n domains; half of each catalog's
// domains run paced (PERIOD 1h, so their producers exist but rarely tick)
// with this node as their authority, half are stopped. Every iteration runs
// one statement cycle, CREATE, START, DESCRIBE, STOP, DROP of a fresh
// domain, on each node, the order of the two nodes alternating between
// iterations, and the benchmark reports each statement's median time on
// the big node and its ratio to the anchor's.
//
// The catalogs are built in bulk, not through n CREATE and START
// statements: one Restore command (the command RESTORE CLUSTER ... RESUME
// commits) per scaleChunk domains, through the node's own commit path, so
// the state is what those statements would have left, with each running
// domain at generation 1 and its producer started by the installation.
const (
	scaleAnchor = 100
	scaleChunk  = 1000
)

var scaleSizes = []int{100, 1_000, 10_000, 100_000}

func scaleLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// buildScale fills n with count domains named dom-<i>, the even ones
// running paced with this node as their authority, the odd ones stopped;
// with only set it builds just the running (or just the stopped) ones.
func buildScale(tb testing.TB, n *Node, count int, only func(i int) bool) {
	tb.Helper()
	ctx := context.Background()
	self := n.Identity()
	wall := n.src.Now()
	var batch []lifecycle.RestoredDomain
	flush := func() {
		if len(batch) == 0 {
			return
		}
		res, err := n.commit(ctx, lifecycle.Command{Op: lifecycle.OpRestore, Restore: &lifecycle.Restore{Domains: batch}})
		require.NoError(tb, err)
		require.NoError(tb, res.Err())
		require.NoError(tb, n.WaitInstalledRevision(ctx, res.Revision))
		batch = nil
	}
	for i := range count {
		if only != nil && !only(i) {
			continue
		}
		rd := lifecycle.RestoredDomain{Name: fmt.Sprintf("dom-%06d", i), Pace: lifecycle.Paced, Period: uint64(time.Hour)}
		if i%2 == 0 {
			id := self
			rd.Generation, rd.Running, rd.Resume, rd.Authority = 1, true, true, &id
			rd.LastStart = lifecycle.StartPoint{Mode: lifecycle.StartAt, LogicalStart: wall, Rate: 1, WallStartedAt: wall}
		}
		batch = append(batch, rd)
		if len(batch) == scaleChunk {
			flush()
		}
	}
	flush()
}

func openScale(tb testing.TB, dir string) *Node {
	tb.Helper()
	n, err := Open(context.Background(), Config{DataDir: dir, Logger: scaleLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.System()})
	require.NoError(tb, err)
	return n
}

var scaleStatements = []string{"create", "start", "describe", "stop", "drop"}

// statementCycle runs the cycle on a fresh domain and appends each
// statement's time to took.
func statementCycle(tb testing.TB, n *Node, name string, took map[string][]time.Duration) {
	ctx := context.Background()
	step := func(what string, f func() error) {
		t0 := time.Now()
		err := f()
		took[what] = append(took[what], time.Since(t0))
		if err != nil {
			tb.Fatalf("%s %s: %v", what, name, err)
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

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// heapAndStacks is the memory the Go runtime holds for live objects and
// goroutine stacks, after a collection.
func heapAndStacks() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// BenchmarkScale is the per-statement part of the scale table, with LIST
// DOMAINS, the catalog snapshot's size and encoding time (the binary state
// the catalog writes) and the memory per stopped and per running domain of
// the big catalog.
func BenchmarkScale(b *testing.B) {
	for _, size := range scaleSizes {
		b.Run("N="+strconv.Itoa(size), func(b *testing.B) {
			anchor := openScale(b, "")
			defer anchor.Close()
			buildScale(b, anchor, scaleAnchor, nil)

			big := openScale(b, "")
			defer big.Close()
			m0 := heapAndStacks()
			buildScale(b, big, size, func(i int) bool { return i%2 == 1 })
			m1 := heapAndStacks()
			buildScale(b, big, size, func(i int) bool { return i%2 == 0 })
			m2 := heapAndStacks()
			stopped, running := (size+1)/2, size/2

			tookBig, tookAnchor := map[string][]time.Duration{}, map[string][]time.Duration{}
			i := 0
			for b.Loop() {
				name := fmt.Sprintf("cycle-%d", i)
				if i%2 == 0 {
					statementCycle(b, big, name, tookBig)
					statementCycle(b, anchor, name, tookAnchor)
				} else {
					statementCycle(b, anchor, name, tookAnchor)
					statementCycle(b, big, name, tookBig)
				}
				i++
			}
			b.StopTimer()
			// Reported after b.Loop, which resets what was reported before.
			b.ReportMetric(float64(m1-m0)/float64(stopped), "B/stopped_domain")
			b.ReportMetric(float64(int64(m2)-int64(m1))/float64(running), "B/running_domain")
			for _, st := range scaleStatements {
				mb, ma := median(tookBig[st]), median(tookAnchor[st])
				b.ReportMetric(float64(mb.Nanoseconds()), st+"_ns")
				b.ReportMetric(float64(mb)/float64(ma), st+"_ratio")
			}

			var list []time.Duration
			for range 5 {
				t0 := time.Now()
				ds := big.Domains()
				list = append(list, time.Since(t0))
				require.Len(b, ds, size)
			}
			b.ReportMetric(float64(median(list).Nanoseconds()), "list_ns")

			// LIST DOMAINS through a session as the server sends it: streamed,
			// each chunk encoded to its rows message as it is produced, against
			// the whole table built and encoded as one reply.
			sess := session.New(big, session.Options{Logger: scaleLogger()})
			var streamed, whole []time.Duration
			largest, largestWhole := 0, 0
			for range 5 {
				t0 := time.Now()
				rows := 0
				_, err := sess.ExecRows(context.Background(), planner.ListDomains{}, func(c *wire.ResultSet) error {
					msg, err := json.Marshal(wire.ServerMessage{Type: wire.TypeRows, ID: 1, Set: wire.EncodeSet(c)})
					largest = max(largest, len(msg))
					rows += len(c.Rows)
					return err
				})
				streamed = append(streamed, time.Since(t0))
				require.NoError(b, err)
				require.Equal(b, size, rows)

				t0 = time.Now()
				res, err := sess.Exec(context.Background(), planner.ListDomains{})
				require.NoError(b, err)
				msg, err := json.Marshal(wire.ServerMessage{Type: wire.TypeReply, ID: 1, Result: wire.EncodeResult(res)})
				whole = append(whole, time.Since(t0))
				require.NoError(b, err)
				largestWhole = len(msg)
			}
			require.NoError(b, sess.Close())
			b.ReportMetric(float64(median(streamed).Nanoseconds()), "list_stream_ns")
			b.ReportMetric(float64(median(whole).Nanoseconds()), "list_whole_ns")
			b.ReportMetric(float64(largest), "list_stream_largest_B")
			b.ReportMetric(float64(largestWhole), "list_whole_B")

			var snap []time.Duration
			var bytes int
			for range 3 {
				t0 := time.Now()
				raw, err := big.catalog.State().MarshalSnapshotBinary()
				snap = append(snap, time.Since(t0))
				require.NoError(b, err)
				bytes = len(raw)
			}
			b.ReportMetric(float64(bytes), "snapshot_B")
			b.ReportMetric(float64(median(snap).Nanoseconds()), "snapshot_ns")
		})
	}
}

// BenchmarkScaleRestart is the restart part of the scale table: a durable
// node with N domains (half running paced) takes a snapshot and closes;
// each iteration reopens it and answers a first DESCRIBE, timed from the
// start of Open to the answer, then closes it again.
func BenchmarkScaleRestart(b *testing.B) {
	for _, size := range scaleSizes {
		b.Run("N="+strconv.Itoa(size), func(b *testing.B) {
			dir, err := os.MkdirTemp("", "nspl-scale-")
			require.NoError(b, err)
			defer os.RemoveAll(dir)
			n := openScale(b, dir)
			buildScale(b, n, size, nil)
			require.NoError(b, n.catalog.Snapshot())
			require.NoError(b, n.Close())

			var took []time.Duration
			var mem uint64
			for b.Loop() {
				m0 := heapAndStacks()
				t0 := time.Now()
				n := openScale(b, dir)
				_, err := n.Domain(fmt.Sprintf("dom-%06d", size-1))
				took = append(took, time.Since(t0))
				require.NoError(b, err)
				mem = heapAndStacks() - m0
				require.NoError(b, n.Close())
			}
			b.ReportMetric(float64(median(took).Nanoseconds()), "first_answer_ns")
			b.ReportMetric(float64(mem)/float64(size), "B/domain_after_restart")
		})
	}
}

// BenchmarkScaleMemory says what a stopped domain's memory is spent on:
// the catalog's record alone (a lifecycle.State of N stopped domains), the
// runtime registry's installation alone, and the whole embedded node
// (catalog, raft's in-memory log of the commands that built it, registry),
// each as bytes of heap and stacks per domain after a collection.
func BenchmarkScaleMemory(b *testing.B) {
	const size = 100_000
	restores := func() []lifecycle.Command {
		var cmds []lifecycle.Command
		for start := 0; start < size; start += scaleChunk {
			var batch []lifecycle.RestoredDomain
			for i := start; i < start+scaleChunk; i++ {
				batch = append(batch, lifecycle.RestoredDomain{Name: fmt.Sprintf("dom-%06d", i), Pace: lifecycle.Paced, Period: uint64(time.Hour)})
			}
			cmds = append(cmds, lifecycle.Command{Op: lifecycle.OpRestore, Restore: &lifecycle.Restore{Domains: batch}})
		}
		return cmds
	}
	for b.Loop() {
		cmds := restores()
		m0 := heapAndStacks()
		s := lifecycle.NewState()
		for _, c := range cmds {
			require.NoError(b, s.Apply(c).Err())
		}
		m1 := heapAndStacks()
		goruntime.KeepAlive(cmds) // the commands stay, so m1-m0 is the records alone
		b.ReportMetric(float64(int64(m1)-int64(m0))/size, "B/stopped_domain_catalog_record")

		n := openScale(b, "")
		m2 := heapAndStacks()
		s.Range(func(d lifecycle.Domain) bool {
			_, err := n.registry.Install(d.Name, LifecycleOf(d, s.Revision()))
			require.NoError(b, err)
			return true
		})
		m3 := heapAndStacks()
		b.ReportMetric(float64(int64(m3)-int64(m2))/size, "B/stopped_domain_installation")
		require.NoError(b, n.Close())
		goruntime.KeepAlive(s)

		n = openScale(b, "")
		m4 := heapAndStacks()
		buildScale(b, n, size, func(i int) bool { return i%2 == 1 })
		m5 := heapAndStacks()
		b.ReportMetric(float64(int64(m5)-int64(m4))/(size/2), "B/stopped_domain_node")
		require.NoError(b, n.Close())
	}
}
