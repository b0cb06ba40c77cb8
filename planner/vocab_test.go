package planner

import (
	"testing"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/stretchr/testify/require"
)

// TestPlanConvertsGrammarVocabulary holds the one place where the grammar's
// keyword enums meet lifecycle's: every value the grammar defines, its zero
// value included (an omitted pacing keyword or PLACEMENT clause), plans to
// the lifecycle value of the same keyword, and a value the grammar does not
// define is refused rather than passed on.
func TestPlanConvertsGrammarVocabulary(t *testing.T) {
	paces := []struct {
		in      grammar.Pace
		want    lifecycle.Pace
		keyword string
	}{
		{grammar.Unpaced, lifecycle.Unpaced, "UNPACED"},
		{grammar.Paced, lifecycle.Paced, "PACED"},
	}
	for _, tc := range paces {
		t.Run(tc.keyword, func(t *testing.T) {
			st := &grammar.CreateDomain{Pace: tc.in, Name: grammar.Name{Value: "d"}}
			src := "CREATE " + tc.keyword + " DOMAIN d"
			if tc.in == grammar.Paced {
				st.Period, st.Skew = &grammar.Duration{Nanos: 1}, &grammar.Duration{}
				src += " WITH PERIOD 1ns SKEW 0"
			}
			p, err := PlanStatement(st)
			require.NoError(t, err)
			require.Equal(t, tc.want, p.(CreateDomain).Pace)
			require.Equal(t, tc.keyword, tc.want.String())

			// The keyword the grammar parses plans to the same value.
			plans, err := PlanScript(src)
			require.NoError(t, err)
			require.Equal(t, tc.want, plans[0].(CreateDomain).Pace)
		})
	}

	placements := []struct {
		in      grammar.Placement
		want    lifecycle.Placement
		keyword string
	}{
		{grammar.Neutral, lifecycle.Neutral, "NEUTRAL"},
		{grammar.RequireColocation, lifecycle.RequireColocation, "REQUIRE COLOCATION"},
		{grammar.PreferColocation, lifecycle.PreferColocation, "PREFER COLOCATION"},
		{grammar.SuggestSeparation, lifecycle.SuggestSeparation, "SUGGEST SEPARATION"},
	}
	for _, tc := range placements {
		t.Run(tc.keyword, func(t *testing.T) {
			pol := grammar.PlacementPolicy{Policy: tc.in}
			p, err := PlanStatement(&grammar.CreateDomain{Name: grammar.Name{Value: "d"}, Placement: &pol})
			require.NoError(t, err)
			require.Equal(t, tc.want, p.(CreateDomain).Placement)
			p, err = PlanStatement(&grammar.AlterPlacement{Placement: pol})
			require.NoError(t, err)
			require.Equal(t, tc.want, p.(AlterPlacement).Placement)
			require.Equal(t, tc.keyword, tc.want.String())

			// The keyword the grammar parses plans to the same value.
			plans, err := PlanScript("ALTER DOMAIN SET PLACEMENT " + tc.keyword)
			require.NoError(t, err)
			require.Equal(t, tc.want, plans[0].(AlterPlacement).Placement)
		})
	}

	// The zero values occur: a statement built without a pacing keyword or
	// a PLACEMENT policy plans to lifecycle's zero values.
	p, err := PlanStatement(&grammar.CreateDomain{Name: grammar.Name{Value: "d"},
		Placement: &grammar.PlacementPolicy{}})
	require.NoError(t, err)
	require.Equal(t, lifecycle.Unpaced, p.(CreateDomain).Pace)
	require.Equal(t, lifecycle.Neutral, p.(CreateDomain).Placement)
	p, err = PlanStatement(&grammar.AlterPlacement{})
	require.NoError(t, err)
	require.Equal(t, lifecycle.Neutral, p.(AlterPlacement).Placement)

	for _, st := range []grammar.Statement{
		&grammar.CreateDomain{Pace: grammar.Paced + 1, Name: grammar.Name{Value: "d"}},
		&grammar.CreateDomain{Name: grammar.Name{Value: "d"}, Placement: &grammar.PlacementPolicy{Policy: grammar.SuggestSeparation + 1}},
		&grammar.AlterPlacement{Placement: grammar.PlacementPolicy{Policy: grammar.SuggestSeparation + 1}},
	} {
		_, err := PlanStatement(st)
		require.ErrorIs(t, err, ErrUnknownStatement)
	}
}

// TestStep holds the one conversion of a queued plan into the lifecycle
// step a node resolves: each of the three step plans gives its op with its
// request or placement, and any other plan gives an op that is its
// canonical text, which names no step, so the node refuses it.
func TestStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan Plan
		want lifecycle.StepRequest
	}{
		{"plain START", Start{Mode: StartResume, Rate: DefaultRate},
			lifecycle.StepRequest{Op: lifecycle.StepStart, Start: lifecycle.StartRequest{Mode: lifecycle.StartResume}}},
		{"START AT NOW", Start{Mode: StartAtNow, Rate: 3},
			lifecycle.StepRequest{Op: lifecycle.StepStart, Start: lifecycle.StartRequest{Mode: lifecycle.StartNow, Rate: 3}}},
		{"START AT", Start{Mode: StartAtTime, At: -5, Rate: 0.5},
			lifecycle.StepRequest{Op: lifecycle.StepStart, Start: lifecycle.StartRequest{Mode: lifecycle.StartAt, At: -5, Rate: 0.5}}},
		{"STOP", Stop{}, lifecycle.StepRequest{Op: lifecycle.StepStop}},
		{"ALTER PLACEMENT", AlterPlacement{Placement: lifecycle.SuggestSeparation},
			lifecycle.StepRequest{Op: lifecycle.StepAlterPlacement, Placement: lifecycle.SuggestSeparation}},
		{"DROP is no step", DropDomain{Name: "prod"}, lifecycle.StepRequest{Op: "DROP DOMAIN prod;"}},
		{"USE is no step", Use{Name: "x"}, lifecycle.StepRequest{Op: "USE x;"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Step(tc.plan))
		})
	}
}
