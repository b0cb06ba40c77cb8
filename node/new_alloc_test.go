package node

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNewBuildsMetricsOnFirstUse: building a node does not build its
// Prometheus registry (whose Go and process collectors cost a short-lived
// nspl -c a measurable share of its run); the first MetricsRegistry does,
// and every later call returns the same registry.
func TestNewBuildsMetricsOnFirstUse(t *testing.T) {
	cfg := Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	allocs := testing.AllocsPerRun(20, func() {
		_, err := New(cfg)
		require.NoError(t, err)
	})
	require.LessOrEqual(t, allocs, float64(newAllocBudget), "node.New allocates %v times; is the metrics registry built eagerly again?", allocs)

	n, err := New(cfg)
	require.NoError(t, err)
	reg := n.MetricsRegistry()
	require.Same(t, reg, n.MetricsRegistry())
	fams, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	require.True(t, names["go_goroutines"], "the registry built on first use holds the Go collector")
}

// newAllocBudget bounds node.New's allocations: the node's own state and
// runtime registry, without the metrics registry.
const newAllocBudget = 60
