package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// TestPreflightMatchesCommit preflights plans and then commits the same
// plans: the preflight changes nothing, and it refuses exactly what COMMIT
// refuses, with the same error (sentinel, code, step and message), and
// passes exactly what COMMIT applies.
func TestPreflightMatchesCommit(t *testing.T) {
	start := planner.Start{Mode: planner.StartResume, Rate: planner.DefaultRate}
	startAt := planner.Start{Mode: planner.StartAtTime, At: 0, Rate: 4}
	stop := planner.Stop{}
	place := planner.AlterPlacement{Placement: lifecycle.PreferColocation}
	for _, tc := range []struct {
		name    string
		running bool // the domain runs before the transaction
		plans   []planner.Plan
		is      error // nil when the transaction applies
		step    int
	}{
		{name: "START; START on a stopped domain", plans: []planner.Plan{start, start}, is: lifecycle.ErrAlreadyRunning, step: 2},
		{name: "START AT; ALTER; START", plans: []planner.Plan{startAt, place, start}, is: lifecycle.ErrAlreadyRunning, step: 3},
		{name: "STOP on a stopped domain", plans: []planner.Plan{stop}, is: lifecycle.ErrAlreadyStopped, step: 1},
		{name: "STOP; STOP on a running domain", running: true, plans: []planner.Plan{stop, stop}, is: lifecycle.ErrAlreadyStopped, step: 2},
		{name: "START on a running domain", running: true, plans: []planner.Plan{place, start}, is: lifecycle.ErrAlreadyRunning, step: 2},
		{name: "a plan that is no step", plans: []planner.Plan{start, planner.DropDomain{Name: "prod"}}, is: ErrNotTransactional},
		{name: "START; ALTER; STOP; START", plans: []planner.Plan{start, place, stop, startAt}},
		{name: "STOP; START on a running domain", running: true, plans: []planner.Plan{stop, start}},
		{name: "ALTER alone", plans: []planner.Plan{place}},
		{name: "no plans", plans: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := timesource.NewFake(t0)
			n := openNode(t, fake, "")
			defer func() { require.NoError(t, n.Close()) }()
			ctx := context.Background()
			_, err := n.CreateDomain(ctx, paced("prod", time.Second, 0))
			require.NoError(t, err)
			if tc.running {
				_, err = n.Start(ctx, "prod", startAt.Request())
				require.NoError(t, err)
			}
			before, err := n.Domain("prod")
			require.NoError(t, err)
			rev := n.catalog.Revision()

			preErr := n.PreflightTransaction("prod", steps(tc.plans...))
			require.Equal(t, rev, n.catalog.Revision(), "a preflight commits nothing")
			after, err := n.Domain("prod")
			require.NoError(t, err)
			require.Equal(t, before, after)

			_, commitErr := n.CommitTransaction(ctx, "prod", steps(tc.plans...))
			if tc.is == nil {
				require.NoError(t, preErr)
				require.NoError(t, commitErr)
				return
			}
			require.ErrorIs(t, preErr, tc.is)
			require.ErrorIs(t, commitErr, tc.is)
			require.Equal(t, commitErr.Error(), preErr.Error())
			if tc.step > 0 {
				require.Equal(t, *lifecycle.AsError(commitErr), *lifecycle.AsError(preErr))
				require.Equal(t, tc.step, lifecycle.AsError(preErr).Step)
			}
			require.Equal(t, rev, n.catalog.Revision(), "a refused commit commits nothing")
		})
	}

	t.Run("missing domain", func(t *testing.T) {
		n := openNode(t, timesource.NewFake(t0), "")
		defer func() { require.NoError(t, n.Close()) }()
		err := n.PreflightTransaction("nope", steps(planner.Stop{}))
		require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)
		_, commitErr := n.CommitTransaction(context.Background(), "nope", steps(planner.Stop{}))
		require.Equal(t, commitErr.Error(), err.Error())
	})
}
