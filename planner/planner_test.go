package planner

import (
	"errors"
	"math"
	"testing"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/stretchr/testify/require"
)

// unplaced returns p with its position cleared: positions say where a plan
// came from, not what it is.
func unplaced(p Plan) Plan {
	switch v := p.(type) {
	case CreateDomain:
		v.Located = Located{}
		return v
	case AlterPlacement:
		v.Located = Located{}
		return v
	case Start:
		v.Located = Located{}
		return v
	case Stop:
		return Stop{}
	case Attach:
		return Attach{}
	case Detach:
		return Detach{}
	case Use:
		v.Located = Located{}
		return v
	case ListDomains:
		v.Located = Located{}
		return v
	case DescribeDomain:
		v.Located = Located{}
		return v
	case DropDomain:
		v.Located = Located{}
		return v
	case Begin:
		return Begin{}
	case Commit:
		return Commit{}
	case Rollback:
		return Rollback{}
	case ShowClusterStatus:
		return ShowClusterStatus{}
	case ShowTransactions:
		return ShowTransactions{All: v.All}
	case Backup:
		v.Located = Located{}
		return v
	case Restore:
		v.Located = Located{}
		return v
	case DescribeBackup:
		v.Located = Located{}
		return v
	}
	panic("unknown plan type")
}

var planCases = []struct {
	src       string
	want      Plan
	canonical string
}{
	{"create paced domain Prod with period 1s skew 100ms;",
		CreateDomain{Name: "prod", Pace: lifecycle.Paced, Period: 1e9, Skew: 1e8},
		"CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms PLACEMENT NEUTRAL;"},
	{"CREATE IF NOT EXISTS PACED DOMAIN `eu-1` WITH PERIOD 1.5s SKEW 0 PLACEMENT REQUIRE COLOCATION",
		CreateDomain{Name: "eu-1", Pace: lifecycle.Paced, Period: 15e8, Placement: lifecycle.RequireColocation, IfNotExists: true},
		"CREATE IF NOT EXISTS PACED DOMAIN `eu-1` WITH PERIOD 1.5s SKEW 0s PLACEMENT REQUIRE COLOCATION;"},
	{"CREATE PACED DOMAIN x WITH PERIOD 1ns SKEW 18446744073709551615ns",
		CreateDomain{Name: "x", Pace: lifecycle.Paced, Period: 1, Skew: math.MaxUint64},
		"CREATE PACED DOMAIN x WITH PERIOD 1ns SKEW 5124095h34m33.709551615s PLACEMENT NEUTRAL;"},
	{"CREATE PACED DOMAIN x WITH PERIOD 18446744073709551615ns SKEW 1y",
		CreateDomain{Name: "x", Pace: lifecycle.Paced, Period: math.MaxUint64, Skew: 31557600e9},
		"CREATE PACED DOMAIN x WITH PERIOD 5124095h34m33.709551615s SKEW 8766h PLACEMENT NEUTRAL;"},
	{"CREATE UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;",
		CreateDomain{Name: "archive", Pace: lifecycle.Unpaced, Placement: lifecycle.SuggestSeparation},
		"CREATE UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;"},
	{"CREATE DOMAIN `Clock`",
		CreateDomain{Name: "clock", Pace: lifecycle.Unpaced},
		"CREATE UNPACED DOMAIN `clock` PLACEMENT NEUTRAL;"},
	{"ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;",
		AlterPlacement{Placement: lifecycle.PreferColocation},
		"ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;"},
	{"START;", Start{Mode: StartResume, Rate: 1}, "START;"},
	{"START AT NOW", Start{Mode: StartAtNow, Rate: 1}, "START AT NOW TIME RATE 1;"},
	{"START AT NOW TIME RATE 5e-324", Start{Mode: StartAtNow, Rate: math.SmallestNonzeroFloat64}, "START AT NOW TIME RATE 5e-324;"},
	{"START AT NOW TIME RATE 1.7976931348623157e308", Start{Mode: StartAtNow, Rate: math.MaxFloat64}, "START AT NOW TIME RATE 1.7976931348623157e+308;"},
	{"START AT '2026-01-01T01:00:00.500+01:00' TIME RATE 60",
		Start{Mode: StartAtTime, At: 1767225600e9 + 5e8, Rate: 60},
		"START AT '2026-01-01T00:00:00.5Z' TIME RATE 60;"},
	{"START AT '1677-09-21T00:12:43.145224192Z'", Start{Mode: StartAtTime, At: math.MinInt64, Rate: 1},
		"START AT '1677-09-21T00:12:43.145224192Z' TIME RATE 1;"},
	{"START AT '2262-04-11T23:47:16.854775807Z' TIME RATE 0.1", Start{Mode: StartAtTime, At: math.MaxInt64, Rate: 0.1},
		"START AT '2262-04-11T23:47:16.854775807Z' TIME RATE 0.1;"},
	{"START AT '2016-12-31T23:59:60Z'", Start{Mode: StartAtTime, At: 1483228800e9, Rate: 1},
		"START AT '2017-01-01T00:00:00Z' TIME RATE 1;"},
	{"STOP", Stop{}, "STOP;"},
	{"ATTACH DOMAIN CLOCK", Attach{}, "ATTACH DOMAIN CLOCK;"},
	{"DETACH DOMAIN CLOCK", Detach{}, "DETACH DOMAIN CLOCK;"},
	{"USE Prod", Use{Name: "prod"}, "USE prod;"},
	{"USE `a~b`", Use{Name: "a~b"}, "USE `a~b`;"},
	{"LIST DOMAINS", ListDomains{}, "LIST DOMAINS;"},
	{"LIST DOMAINS LIKE 'Web-%'", ListDomains{Like: "web-%"}, "LIST DOMAINS LIKE 'web-%';"},
	{"DESCRIBE DOMAIN", DescribeDomain{}, "DESCRIBE DOMAIN;"},
	{"DESCRIBE DOMAIN `start`", DescribeDomain{Name: "start"}, "DESCRIBE DOMAIN `start`;"},
	{"DROP DOMAIN p", DropDomain{Name: "p"}, "DROP DOMAIN p;"},
	{"DROP DOMAIN IF EXISTS p", DropDomain{Name: "p", IfExists: true}, "DROP DOMAIN IF EXISTS p;"},
	{"BEGIN", Begin{}, "BEGIN;"},
	{"show cluster status", ShowClusterStatus{}, "SHOW CLUSTER STATUS;"},
	{"show transactions", ShowTransactions{}, "SHOW TRANSACTIONS;"},
	{"show all transactions", ShowTransactions{All: true}, "SHOW ALL TRANSACTIONS;"},
	{"COMMIT", Commit{}, "COMMIT;"},
	{"REVERT", Rollback{}, "REVERT;"},
	{"ROLLBACK", Rollback{}, "REVERT;"},
}

func TestPlan(t *testing.T) {
	for _, tc := range planCases {
		t.Run(tc.src, func(t *testing.T) {
			plans, err := PlanScript(tc.src)
			require.NoError(t, err)
			require.Len(t, plans, 1)
			require.Equal(t, tc.want, unplaced(plans[0]))
			require.Equal(t, tc.canonical, plans[0].String())
			require.Equal(t, grammar.Position{Offset: 0, Line: 1, Column: 1}, plans[0].Pos())

			again, err := PlanScript(plans[0].String())
			require.NoError(t, err)
			require.Equal(t, []Plan{unplaced(plans[0])}, []Plan{unplaced(again[0])})
		})
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		pos  string
		kind error
		msg  string
	}{
		{"CREATE PACED DOMAIN p WITH PERIOD 0s SKEW 0", "1:35", ErrNonPositivePeriod, "PERIOD must be positive"},
		{"CREATE PACED DOMAIN p WITH PERIOD 0 SKEW 0", "1:35", ErrNonPositivePeriod, "PERIOD must be positive"},
		{"CREATE PACED DOMAIN p WITH PERIOD 0.1ns SKEW 0", "1:35", ErrNonPositivePeriod, "PERIOD must be positive"},
		{"CREATE PACED DOMAIN p WITH PERIOD 18446744073709551616ns SKEW 0", "1:35", grammar.ErrInvalidDuration, "add up past"},
		{"STOP;\nSTART AT NOW TIME RATE 0", "2:24", grammar.ErrInvalidRate, "'0'"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, err := PlanScript(tc.src)
			require.ErrorIs(t, err, tc.kind)
			var e *grammar.Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, tc.pos, e.Pos.String())
			require.Contains(t, err.Error(), tc.msg)
		})
	}
	// The smallest positive PERIOD is accepted.
	plans, err := PlanScript("CREATE PACED DOMAIN p WITH PERIOD 1ns SKEW 0")
	require.NoError(t, err)
	require.Equal(t, uint64(1), plans[0].(CreateDomain).Period)

	_, err = PlanStatement(nil)
	require.ErrorIs(t, err, ErrUnknownStatement)
	_, err = PlanStatement((*grammar.Stop)(nil))
	require.ErrorIs(t, err, ErrUnknownStatement)
}

func TestPlanScriptPositions(t *testing.T) {
	plans, err := PlanScript("USE a;\n  STOP;\nBEGIN; BOGUS")
	require.Error(t, err)
	require.Len(t, plans, 3)
	require.Equal(t, grammar.Position{Offset: 9, Line: 2, Column: 3}, plans[1].Pos())
	require.Equal(t, grammar.Position{Offset: 15, Line: 3, Column: 1}, plans[2].Pos())
}

// FuzzRoundTrip checks that whatever plans, prints as canonical text that
// plans to the same values, and that the canonical text is a fixed point.
func FuzzRoundTrip(f *testing.F) {
	for _, tc := range planCases {
		f.Add(tc.src)
		f.Add(tc.canonical)
	}
	f.Fuzz(func(t *testing.T, src string) {
		plans, _ := PlanScript(src)
		for _, p := range plans {
			text := p.String()
			again, err := PlanScript(text)
			require.NoError(t, err, text)
			require.Len(t, again, 1, text)
			require.Equal(t, unplaced(p), unplaced(again[0]), text)
			require.Equal(t, text, again[0].String())
		}
	})
}

func TestStartRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want lifecycle.StartRequest
	}{
		// A plain START leaves the rate to the lifecycle's resume rule.
		{"START", lifecycle.StartRequest{Mode: lifecycle.StartResume}},
		{"START AT NOW", lifecycle.StartRequest{Mode: lifecycle.StartNow, Rate: 1}},
		{"START AT NOW TIME RATE 2.5", lifecycle.StartRequest{Mode: lifecycle.StartNow, Rate: 2.5}},
		{"START AT '2026-01-01T00:00:00Z' TIME RATE 60", lifecycle.StartRequest{Mode: lifecycle.StartAt, At: 1767225600e9, Rate: 60}},
		// The timestamp is carried to the nanosecond, at both ends of its range.
		{"START AT '1677-09-21T00:12:43.145224192Z'", lifecycle.StartRequest{Mode: lifecycle.StartAt, At: math.MinInt64, Rate: 1}},
		{"START AT '2262-04-11T23:47:16.854775807Z' TIME RATE 0.5", lifecycle.StartRequest{Mode: lifecycle.StartAt, At: math.MaxInt64, Rate: 0.5}},
		{"START AT '2026-01-01T00:00:00.000000001Z'", lifecycle.StartRequest{Mode: lifecycle.StartAt, At: 1767225600e9 + 1, Rate: 1}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			plans, err := PlanScript(tc.in)
			require.NoError(t, err)
			require.Len(t, plans, 1)
			p, ok := plans[0].(Start)
			require.True(t, ok, "%T", plans[0])
			require.Equal(t, tc.want, p.Request())
		})
	}
}
