package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

func TestLateJoinerInstallsTheExistingMapping(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	n1 := h.Start("n1", true)
	h.Start("n2", false, n1.APIAddr())
	d := startPaced(t, n1, "late", 20*time.Millisecond)
	h.Eventually(10*time.Second, "ticks on both members", func() bool {
		for _, m := range h.Live() {
			if _, ok := tickedBy(m, "late", d.Authority); !ok {
				return false
			}
		}
		return true
	})

	joinedAt := time.Now().UnixNano()
	n3 := h.Start("n3", false, h.Member("n2").APIAddr()) // through a follower
	in := n3.Node().Installation("late")
	mapping, ok := in.Mapping()
	require.True(t, ok, "the joiner installed the paced mapping before Start returned")
	require.Equal(t, *d.Mapping, mapping, "origin, anchor and rate are the committed ones")
	require.Less(t, mapping.WallStartedAt, joinedAt, "the join time is never an anchor")
	require.Equal(t, d.Generation, in.Generation())
	// The joiner is a voter that receives the authority's ticks (or is the
	// authority, if reconciliation moved it there: it never does for an
	// available authority).
	require.Equal(t, d.Authority, domainOn(t, n3, "late").Authority)
	h.Eventually(10*time.Second, "ticks on the joiner", func() bool {
		_, ok := tickedBy(n3, "late", d.Authority)
		return ok
	})
	st := n1.Status()
	require.Len(t, st.Nodes, 3)
	for _, ns := range st.Nodes {
		require.True(t, ns.Voter, ns.Name)
		require.NotZero(t, ns.Incarnation, ns.Name)
	}
}

func TestWholeClusterRestartRecoversTheMapping(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{Durable: true})
	h.StartThree()
	d := startPaced(t, h.Member("n2"), "survivor", 20*time.Millisecond)
	before := make(map[string]uint64)
	for _, m := range h.Live() {
		before[m.Node().Name()] = m.Node().Identity().Incarnation
	}
	for _, name := range []string{"n1", "n2", "n3"} {
		h.Kill(name)
	}

	// Every member restarts at once on its data directory and addresses;
	// none needs --bootstrap or --join again.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, name := range []string{"n1", "n2", "n3"} {
		cfg := h.Config(name, false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.StartConfig(cfg)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))

	var after lifecycle.Domain
	h.Eventually(10*time.Second, "an authority among the new incarnations", func() bool {
		after = domainOn(t, h.Member("n1"), "survivor")
		m := h.Member(after.Authority.Node)
		return m != nil && after.Authority.Incarnation == m.Node().Identity().Incarnation
	})
	require.Equal(t, d.Generation, after.Generation)
	require.Equal(t, d.Mapping, after.Mapping)
	require.Greater(t, after.Authority.Revision, d.Authority.Revision)
	for _, m := range h.Live() {
		require.NotEqual(t, before[m.Node().Name()], m.Node().Identity().Incarnation, "every start registers a fresh incarnation")
	}
	// Under load the availability probes may move the authority again
	// (to another new incarnation); the ticks to wait for are the current
	// authority's.
	h.Eventually(10*time.Second, "ticks of the new authority on every member", func() bool {
		cur := domainOn(t, h.Member("n1"), "survivor").Authority
		if m := h.Member(cur.Node); m == nil || cur.Incarnation != m.Node().Identity().Incarnation {
			return false
		}
		for _, m := range h.Live() {
			if _, ok := tickedBy(m, "survivor", cur); !ok {
				return false
			}
		}
		return true
	})
}

func TestStatementsOnAFollowerReplyAsOnTheLeader(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	follower := h.Follower(leader)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	create := lifecycle.CreateDomain{Name: "fwd", Pace: lifecycle.Paced, Period: uint64(time.Second)}
	out, err := follower.Node().CreateDomain(ctx, create)
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.Equal(t, "fwd", out.Domain.Name, "the follower installed the revision before replying")

	// The same refusal on either node: a typed lifecycle error.
	_, errF := follower.Node().CreateDomain(ctx, create)
	_, errL := leader.Node().CreateDomain(ctx, create)
	require.ErrorIs(t, errF, lifecycle.ErrDomainExists)
	require.ErrorIs(t, errL, lifecycle.ErrDomainExists)
	require.Equal(t, errL.Error(), errF.Error())

	_, err = follower.Node().Start(ctx, "fwd", planner.Start{Mode: planner.StartAtNow, Rate: 2}.Request())
	require.NoError(t, err)
	_, err = follower.Node().Stop(ctx, "fwd")
	require.NoError(t, err)
	_, errF = follower.Node().Stop(ctx, "fwd")
	_, errL = leader.Node().Stop(ctx, "fwd")
	require.Error(t, errF)
	require.Equal(t, errL.Error(), errF.Error())
	require.Positive(t, follower.Metrics().CommitLatency.Count)
}

func TestRemoveAndLeave(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	d := startPaced(t, h.Member("n1"), "moving", 20*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var other *cluster.Member
	for _, m := range h.Live() {
		if m.Node().Name() != d.Authority.Node {
			other = m
		}
	}
	// The authority leaves; its clock moves to a remaining voter. The
	// member watched for it has the domain first: under load a follower
	// may not have applied the CREATE yet.
	require.NoError(t, other.Node().WaitInstalledRevision(ctx, d.Revision))
	authority := h.Member(d.Authority.Node)
	require.NoError(t, authority.Leave(ctx))
	h.Forget(d.Authority.Node)
	h.Eventually(10*time.Second, "the authority moved off the node that left", func() bool {
		a := domainOn(t, other, "moving").Authority
		return a.Assigned() && a.Node != d.Authority.Node
	})
	st := other.Status()
	require.Len(t, st.Nodes, 2)
	for _, ns := range st.Nodes {
		require.NotEqual(t, d.Authority.Node, ns.Name)
	}
	require.ErrorIs(t, other.Remove(ctx, "nobody"), cluster.ErrUnknownNode)

	// Removing a member through a follower goes to the leader.
	var follower, target *cluster.Member
	for _, m := range h.Live() {
		if m.Node().IsLeader() {
			target = m
		} else {
			follower = m
		}
	}
	require.NotNil(t, follower)
	require.NoError(t, follower.Remove(ctx, target.Node().Name()))
	h.Eventually(10*time.Second, "the removed leader's successor", func() bool {
		return follower.Node().IsLeader()
	})
	servers, err := follower.Node().Servers()
	require.NoError(t, err)
	require.Len(t, servers, 1)
}

func TestStartRefusesBadConfig(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	cases := []struct {
		name string
		edit func(*cluster.Config)
		err  error
	}{
		{"bad name", func(c *cluster.Config) { c.Node = "bad name" }, cluster.ErrConfig},
		{"certificate of another node", func(c *cluster.Config) { c.Material = h.Material("other") }, cluster.ErrConfig},
		{"nothing to join", func(c *cluster.Config) { c.Bootstrap = false }, cluster.ErrNoJoinAddress},
		{"no material", func(c *cluster.Config) { c.Material = nil }, cluster.ErrConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := h.Config("n1", true)
			defer cfg.RaftListener.Close()
			c.edit(&cfg)
			_, err := cluster.Start(context.Background(), cfg)
			require.ErrorIs(t, err, c.err)
		})
	}
	_ = catalog.ErrConfig
}
