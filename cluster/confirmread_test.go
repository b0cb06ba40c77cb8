package cluster_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/internal/testlog"
)

// TestLinearizableReadWaitsOutAnElection holds that a linearizable read
// on a node that knows no leader waits for one, as a write does, instead
// of failing at once: the read starts on a member cut off from the others
// until it has no leader, its barrier is refused and retried (the node
// logs the retry), and once the cut heals the same read is confirmed.
func TestLinearizableReadWaitsOutAnElection(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-member cluster")
	}
	var logs testlog.Buffer
	h := testcluster.New(t, testcluster.Options{Faults: true, Logger: logs.Logger(slog.LevelDebug)})
	h.StartThree()
	leader := h.Leader()
	victim := h.Follower(leader)
	name := victim.Node().Name()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	h.Net().Isolate(name, h.Names()...)
	h.Eventually(time.Minute, "the cut-off member knows no leader", func() bool {
		_, ok := victim.Node().Leader()
		return !ok
	})
	done := make(chan error, 1)
	go func() { done <- victim.Node().ConfirmRead(ctx) }()
	retried := func() bool { return len(logs.Records(t, "read barrier did not commit; retrying")) > 0 }
	for !retried() {
		select {
		case err := <-done:
			t.Fatalf("the read returned before a leader was reachable, with %v: it must wait for one", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	h.Net().Heal()
	require.NoError(t, <-done, "the read is confirmed through the leader once the cut heals")
}
