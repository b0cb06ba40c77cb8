package planner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
)

// formatSeeds are scripts with comments and every statement form, for
// FuzzFormatPlans beside the planner's own cases.
var formatSeeds = []string{
	"-- setup\ncreate paced domain Prod with period 1s skew 100ms placement prefer colocation; -- prod\n\nuse prod;start at now time rate +2",
	"create domain a /* short */; create unpaced domain `b-1` placement suggest separation\n;",
	"begin; stop; start at \"2026-01-01T01:00:00+01:00\" time rate 1.5e2; commit; rollback; revert",
	"alter domain set placement neutral; attach domain clock; detach domain clock; list domains; describe domain; describe domain `Stop`",
	"drop domain if exists x; show cluster status; backup cluster to 'it''s'; backup domain a to \"~/a\"; describe backup '~/a'",
	"restore cluster from 'c' resume dry run; restore domain a as b from 'x' // done",
	"create paced domain p\n  -- the period\n  with period 1h30m -- long\n  skew /* none */ 0;",
}

func planAll(t *testing.T, src string) ([]Plan, error) {
	t.Helper()
	plans, err := PlanScript(src)
	for i := range plans {
		plans[i] = unplaced(plans[i])
	}
	return plans, err
}

func TestFormatKeepsPlans(t *testing.T) {
	for _, src := range formatSeeds {
		want, err := planAll(t, src)
		require.NoError(t, err, src)
		out, err := grammar.Format(src)
		require.NoError(t, err, src)
		got, err := planAll(t, out)
		require.NoError(t, err, out)
		require.Equal(t, want, got, out)
	}
}

// FuzzFormatPlans checks the formatter's promise to the planner: whatever
// plans, formats to text that plans to the same plans (positions aside) and
// that formats to itself.
func FuzzFormatPlans(f *testing.F) {
	for _, src := range formatSeeds {
		f.Add(src)
	}
	for _, tc := range planCases {
		f.Add(tc.src)
		f.Add(tc.canonical)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, err := planAll(t, src)
		if err != nil {
			return
		}
		out, err := grammar.Format(src)
		require.NoError(t, err, src)
		got, err := planAll(t, out)
		require.NoError(t, err, out)
		require.Equal(t, want, got, out)
		again, err := grammar.Format(out)
		require.NoError(t, err)
		require.Equal(t, out, again, "not a fixed point")
	})
}
