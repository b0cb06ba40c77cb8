package catalog

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
)

// reassignCall is one reassignment the leader's reconciliation proposed,
// held until the test answers it: commit through the real Propose, or
// fail.
type reassignCall struct {
	at     time.Duration // the node clock's monotonic reading at the call
	cmd    lifecycle.Command
	commit chan bool
}

// TestReconcileRetriesAfter200ms holds the reconciliation retry with the
// node's own timing: a reassignment proposal that does not commit, whether
// it fails or is refused, is proposed again exactly 200 ms later on the
// node's clock, with nothing else changing meanwhile, and 200 ms after
// each further failure, until one commits.
func TestReconcileRetriesAfter200ms(t *testing.T) {
	// The specification's figure, deliberately not RetryInterval.
	const retry = 200 * time.Millisecond
	refused := lifecycle.NewState().Apply(lifecycle.Command{Op: lifecycle.OpReassignAuthority,
		ReassignAuthority: &lifecycle.ReassignAuthority{Domain: "gone"}})
	require.Error(t, refused.Err())
	cases := []struct {
		name string
		fail func() (lifecycle.Result, error)
	}{
		{"leadership not yet confirmed", func() (lifecycle.Result, error) { return lifecycle.Result{}, ErrLeadershipUnconfirmed }},
		{"outcome unknown", func() (lifecycle.Result, error) { return lifecycle.Result{}, ErrOutcomeUnknown }},
		{"refused", func() (lifecycle.Result, error) { return refused, nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			defer cancel()
			fake := timesource.NewFake(0)
			calls := make(chan reassignCall)
			var node atomic.Pointer[Replica]
			n := openNode(t, Config{Clock: fake, proposeReassignment: func(pctx context.Context, cmd lifecycle.Command) (lifecycle.Result, error) {
				call := reassignCall{at: fake.Monotonic(), cmd: cmd, commit: make(chan bool)}
				select {
				case calls <- call:
				case <-pctx.Done():
					return lifecycle.Result{}, pctx.Err()
				}
				select {
				case commit := <-call.commit:
					if commit {
						return node.Load().Propose(pctx, cmd)
					}
					return c.fail()
				case <-pctx.Done():
					return lifecycle.Result{}, pctx.Err()
				}
			}})
			node.Store(n)
			next := func() reassignCall {
				t.Helper()
				select {
				case call := <-calls:
					return call
				case <-ctx.Done():
					t.Fatal("the leader proposed no reassignment")
					return reassignCall{}
				}
			}

			// A paced domain started under a node that is not a voter: the
			// leader's reconciliation moves it to itself.
			for _, cmd := range []lifecycle.Command{
				registerCmd("outsider", 5),
				createCmd("prod", lifecycle.Paced),
				startCmd("prod", &lifecycle.Identity{Node: "outsider", Incarnation: 5}, 100, 200, 1),
			} {
				res, err := n.Propose(bg, cmd)
				require.NoError(t, err)
				require.NoError(t, res.Err())
			}
			call := next()
			require.Zero(t, call.at, "the change itself starts the first pass")
			first := *call.cmd.ReassignAuthority
			require.Equal(t, n.Identity(), *first.Authority)
			rev := n.State().Revision()

			for attempt := 1; attempt <= 3; attempt++ {
				call.commit <- false
				require.NoError(t, fake.BlockUntil(ctx, 1), "the failed pass arms its retry")
				wait, _ := fake.Next()
				require.Equal(t, retry, wait, "attempt %d: a proposal that did not commit is proposed again 200 ms later", attempt)
				fired := fake.Fired()
				fake.Advance(retry - 1)
				require.Equal(t, fired, fake.Fired(), "nothing is due before the 200 ms pass")
				select {
				case early := <-calls:
					t.Fatalf("attempt %d: proposed again at %s, before 200 ms passed", attempt, early.at)
				default:
				}
				fake.Advance(1)
				call = next()
				require.Equal(t, time.Duration(attempt)*retry, call.at, "attempt %d comes exactly 200 ms after the one before", attempt)
				require.Equal(t, first, *call.cmd.ReassignAuthority, "the same reassignment is proposed again")
				require.Equal(t, rev, n.State().Revision(), "nothing else changed that could have started the pass")
			}

			call.commit <- true
			s := waitFor(t, n, func(s *lifecycle.State) bool {
				d, _ := s.Domain("prod")
				return d.Authority.Identity() == n.Identity()
			})
			d, _ := s.Domain("prod")
			require.Equal(t, first.ExpectedFence.Revision+1, d.Authority.Revision, "the retry committed the reassignment once")
		})
	}
}
