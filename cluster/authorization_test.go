package cluster_test

import (
	"context"
	"crypto/tls"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

func TestPeerRoutesRefuseWhoMayNotCallThem(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	follower := h.Follower(leader)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	outsider := peerClient(t, h, "evil") // a node certificate of the cluster's CA, never joined
	member := peerClient(t, h, follower.Node().Name())
	fake := interconnect.JoinRequest{Name: "ghost", ServerID: "ghost-server", RaftAddr: "127.0.0.1:1"}
	stop := lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: "d"}}

	cases := []struct {
		name string
		call func() error
	}{
		{"a non-member forwards a join of a fake voter", func() error { return outsider.Join(ctx, leader.APIAddr(), true, fake) }},
		{"a non-member forwards its own join to a follower", func() error {
			return outsider.Join(ctx, follower.APIAddr(), true, interconnect.JoinRequest{Name: "evil", ServerID: "evil-server", RaftAddr: "127.0.0.1:1"})
		}},
		{"a non-member removes a member, forwarded", func() error { return outsider.Remove(ctx, leader.APIAddr(), true, follower.Node().Name()) }},
		{"a non-member removes a member", func() error { return outsider.Remove(ctx, follower.APIAddr(), false, follower.Node().Name()) }},
		{"a non-member proposes, forwarded", func() error { _, err := outsider.Propose(ctx, leader.APIAddr(), true, stop); return err }},
		{"a non-member registers as a member's server", func() error {
			_, err := outsider.Propose(ctx, leader.APIAddr(), true, lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
				Name: "evil", Incarnation: 1, RaftID: follower.Node().ServerID(), RaftAddr: "127.0.0.1:1", APIAddr: "127.0.0.1:2"}})
			return err
		}},
		{"a member joins another node unforwarded", func() error { return member.Join(ctx, leader.APIAddr(), false, fake) }},
		{"a joiner names another node's raft address", func() error {
			return outsider.Join(ctx, leader.APIAddr(), false, interconnect.JoinRequest{Name: "evil", ServerID: "evil-server", RaftAddr: follower.Node().RaftAddress()})
		}},
		{"a joiner takes over a member's raft server", func() error {
			return outsider.Join(ctx, leader.APIAddr(), false, interconnect.JoinRequest{Name: "evil", ServerID: follower.Node().ServerID(), RaftAddr: "127.0.0.1:1"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := leader.Metrics().PeerForbidden + follower.Metrics().PeerForbidden
			require.ErrorIs(t, c.call(), interconnect.ErrForbidden)
			require.Equal(t, before+1, leader.Metrics().PeerForbidden+follower.Metrics().PeerForbidden, "the refusal is counted")
		})
	}
	servers, err := leader.Node().Servers()
	require.NoError(t, err)
	require.Len(t, servers, 3, "no voter was added or removed")
	for _, s := range servers {
		require.NotEqual(t, "127.0.0.1:1", s.RaftAddr, "no member's raft address was replaced")
	}
	require.Len(t, leader.Status().Nodes, 3)
	_, ok := leader.Node().CatalogState().Node("evil")
	require.False(t, ok, "the outsider registered nothing")

	// A genuine join through a follower still works: the follower checks
	// the joiner and forwards it as a voter.
	n4 := h.Start("n4", false, follower.APIAddr())
	servers, err = leader.Node().Servers()
	require.NoError(t, err)
	require.Len(t, servers, 4)
	st, err := cluster.StandingOf(leader, "n4")
	require.NoError(t, err)
	require.Equal(t, interconnect.Standing{Member: true, Voter: true}, st)
	// The new member may propose and is a member everywhere.
	_, err = peerClient(t, h, "n4").Propose(ctx, n4.APIAddr(), false, stop)
	require.NotErrorIs(t, err, interconnect.ErrForbidden)
}

// fakeRaftListener accepts TLS connections as the named node and does
// nothing else: a raft server that presents the node's certificate but
// never answers raft.
func fakeRaftListener(t testing.TB, h *testcluster.Cluster, name string) string {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", h.Material(name).PeerServerConfig())
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func TestOnlyTheJoinerRegistersItsServer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	h := testcluster.New(t, testcluster.Options{})
	h.StartThree()
	leader := h.Leader()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// "evil" joins as itself with a raft server that presents its
	// certificate: a genuine join, not yet registered.
	addr := fakeRaftListener(t, h, "evil")
	require.NoError(t, peerClient(t, h, "evil").Join(ctx, leader.APIAddr(), false, interconnect.JoinRequest{Name: "evil", ServerID: "evil-server", RaftAddr: addr}))
	register := func(name string) lifecycle.Command {
		return lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
			Name: name, Incarnation: 1, RaftID: "evil-server", RaftAddr: addr, APIAddr: "127.0.0.1:1"}}
	}
	// The joiner's raft server never answers, so the cluster has four
	// voters and one silent: an election can come between the join and a
	// proposal. A proposal refused for want of a leader goes to the next
	// one, as a forwarding node's write does.
	propose := func(as string, cmd lifecycle.Command) (lifecycle.Result, error) {
		for {
			leader = h.Leader()
			res, err := peerClient(t, h, as).Propose(ctx, leader.APIAddr(), true, cmd)
			if (errors.Is(err, catalog.ErrNotLeader) || errors.Is(err, catalog.ErrLeadershipUnconfirmed)) && ctx.Err() == nil {
				continue
			}
			return res, err
		}
	}
	// Another node that saw the server id cannot register it as its own.
	_, err := propose("mallory", register("mallory"))
	require.ErrorIs(t, err, interconnect.ErrForbidden)
	_, ok := leader.Node().CatalogState().Node("mallory")
	require.False(t, ok)
	// The joiner itself can.
	res, err := propose("evil", register("evil"))
	require.NoError(t, err)
	require.NoError(t, res.Err())
	st, err := cluster.StandingOf(leader, "evil")
	require.NoError(t, err)
	require.Equal(t, interconnect.Standing{Member: true, Voter: true}, st)
}
