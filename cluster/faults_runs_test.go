//go:build nspl_faults

package cluster_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// envUint reads a positive integer from the environment, def when unset.
func envUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "%s=%q: give a whole number", name, s)
	return n
}

// allFaultKinds are the kinds make faults draws from.
var allFaultKinds = []string{faultIsolate, faultIsolateLeader, faultCutFromLeader, faultCutToLeader, faultDelay, faultKill,
	faultPause, faultClockForward, faultClockBack}

// faultKinds reads FAULTS_KINDS, a comma-separated list of fault kinds,
// every kind when unset.
func faultKinds(t *testing.T) []string {
	t.Helper()
	s := os.Getenv("FAULTS_KINDS")
	if s == "" {
		return allFaultKinds
	}
	kinds := strings.Split(s, ",")
	for _, k := range kinds {
		require.Contains(t, allFaultKinds, k, "FAULTS_KINDS=%q: give kinds among %v", s, allFaultKinds)
	}
	return kinds
}

// TestFaults is make faults: FAULTS_RUNS seeded nemesis runs from
// FAULTS_SEED on, each on a fresh cluster with four faults drawn from
// every kind (or from FAULTS_KINDS), then the table of the run set. A failing history is written
// next to its seed in a directory the test names and keeps; a run is
// replayed by giving its seed as FAULTS_SEED with FAULTS_RUNS=1 (the
// schedule and the operations are the seed's; the machine's timing is
// not).
func TestFaults(t *testing.T) {
	runs, first, kinds := envUint(t, "FAULTS_RUNS", 10), envUint(t, "FAULTS_SEED", 1), faultKinds(t)
	dir, err := os.MkdirTemp("", "nspl-faults-")
	require.NoError(t, err)
	t.Logf("failing histories are written to %s", dir)
	var results []faultRunResult
	for seed := first; seed < first+runs; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			res := runFaults(t, faultRunOptions{seed: seed, episodes: 4,
				kinds: kinds,
				hold:  [2]time.Duration{time.Second, 3 * time.Second}, quiet: time.Second, remote: true}, dir)
			results = append(results, res)
			require.False(t, res.report.Undecided, "seed %d: the checker could not decide the history", seed)
			require.Zero(t, res.report.Anomalies(), "seed %d: local-level violations: %q", seed, res.report.Local)
			require.Empty(t, res.clock, "seed %d: clock-invariant violations", seed)
		})
	}
	t.Logf("\n%s", faultTable(results))
}
