package catalog

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// BenchmarkFSMApply applies committed placement changes, each with a fresh
// request id as Propose gives it, in batches of the sizes raft hands the
// FSM under one writer and under many.
func BenchmarkFSMApply(b *testing.B) {
	for _, batch := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			f := NewFSM(slog.New(slog.DiscardHandler), nil)
			first := logs(b, 1, createCmd("bench", lifecycle.Paced))
			f.ApplyBatch(first)
			// Enough distinct entries that the request window evicts.
			entries := make([]*raft.Log, 2*RequestWindow)
			for i := range entries {
				c := alterCmd("bench", lifecycle.Placement(1+i%2))
				c.RequestID = fmt.Sprintf("bench-1-%d", i)
				entries[i] = &raft.Log{Type: raft.LogCommand, Data: encode(b, c)}
			}
			b.ReportAllocs()
			i := 0
			batchLogs := make([]*raft.Log, batch)
			for b.Loop() {
				for j := range batchLogs {
					batchLogs[j] = entries[i%len(entries)]
					i++
				}
				f.ApplyBatch(batchLogs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/entry")
		})
	}
}

// TestFSMApplyAllocations holds the apply path of a lone writer's batch,
// one command with a request id changing one domain, to its allocation
// budget: the entry's strings, the changed record, the copied path of the
// table, the published clone and the batch's responses.
func TestFSMApplyAllocations(t *testing.T) {
	const budget = 5
	f := NewFSM(quietLogger(t), nil)
	f.ApplyBatch(logs(t, 1, createCmd("bench", lifecycle.Paced)))
	entries := make([]*raft.Log, 256)
	for i := range entries {
		c := alterCmd("bench", lifecycle.Placement(1+i%2))
		c.RequestID = fmt.Sprintf("bench-1-%d", i)
		entries[i] = &raft.Log{Index: uint64(2 + i), Type: raft.LogCommand, Data: encode(t, c)}
	}
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		out := f.ApplyBatch(entries[i : i+1])
		i++
		if r, ok := out[0].(*lifecycle.Result); !ok || !r.Changed {
			t.Fatalf("entry %d answered %v", i, out[0])
		}
	})
	require.LessOrEqual(t, allocs, float64(budget), "allocations per applied command")
}
