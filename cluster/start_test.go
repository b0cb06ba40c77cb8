package cluster_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

// TestStartingMemberAnswersNotReady holds the peer handler of a member
// whose node is still opening (here: it cannot join, so it opens until its
// start is cancelled): it serves, and every route answers that the member
// is still starting, asking no part of the node that is not open yet.
func TestStartingMemberAnswersNotReady(t *testing.T) {
	h := testcluster.New(t, testcluster.Options{})
	h.Start("n1", true)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close()) // nothing answers a join there

	cfg := h.Config("n2", false, deadAddr)
	addr := cfg.APIAddr
	startCtx, stopStart := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() {
		m, err := h.StartContext(startCtx, cfg)
		if err == nil {
			err = m.Close()
		}
		started <- err
	}()
	t.Cleanup(func() {
		stopStart()
		require.Error(t, <-started, "a member that cannot join does not start")
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	peer := peerClient(t, h, "n1")
	calls := []struct {
		name string
		call func() error
	}{
		{"status", func() error { _, err := peer.Status(ctx, addr); return err }},
		{"progress", func() error {
			_, err := peer.Progress(ctx, addr, clockrt.ProgressReport{Domain: "d", Generation: 1, ID: 1})
			return err
		}},
		{"propose", func() error {
			_, err := peer.Propose(ctx, addr, false, lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: "d"}})
			return err
		}},
		{"join", func() error {
			return peer.Join(ctx, addr, false, interconnect.JoinRequest{Name: "n1", ServerID: "s", RaftAddr: "127.0.0.1:1"})
		}},
		{"remove", func() error { return peer.Remove(ctx, addr, false, "n1") }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, c.call(), cluster.ErrNotReady.Error())
		})
	}
}
