package planner

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchScript is a representative 20-statement script: every statement
// form, comments, mixed case, and each literal kind.
const benchScript = `-- set up two domains and run one
CREATE PACED DOMAIN production
  WITH PERIOD 1s SKEW 100ms
  PLACEMENT REQUIRE COLOCATION;
CREATE IF NOT EXISTS UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;
create domain scratch;
USE production;
ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;
/* start at a fixed instant, accelerated */
START AT '2026-01-01T00:00:00Z' TIME RATE 60;
ATTACH DOMAIN CLOCK;
DETACH DOMAIN CLOCK;
STOP;
START AT NOW TIME RATE 1.5;
STOP;
START;
LIST DOMAINS;
DESCRIBE DOMAIN;
DESCRIBE DOMAIN archive;
BEGIN;
STOP;
REVERT;
CREATE PACED DOMAIN ` + "`eu-west~1`" + ` WITH PERIOD 1h30m SKEW 1.5s;
DROP DOMAIN IF EXISTS scratch;
`

const benchStatements = 20

func BenchmarkParsePlan(b *testing.B) {
	plans, err := PlanScript(benchScript)
	require.NoError(b, err)
	require.Len(b, plans, benchStatements)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchScript)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if _, err := PlanScript(benchScript); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/benchStatements, "ns/statement")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/benchStatements, "allocs/statement")
}
