package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
)

// peerClient is an interconnect client presenting the named node's
// certificate of the cluster's CA.
func peerClient(t testing.TB, h *testcluster.Cluster, name string) *interconnect.Client {
	tr := h.Material(name).Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return interconnect.NewClient(tr)
}

// startPaced creates a paced domain through m (any member: a follower
// forwards) and starts it AT NOW.
func startPaced(t testing.TB, m *cluster.Member, domain string, period time.Duration) lifecycle.Domain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := m.Node()
	_, err := n.CreateDomain(ctx, lifecycle.CreateDomain{Name: domain, Pace: lifecycle.Paced, Period: uint64(period), Skew: uint64(period)})
	require.NoError(t, err)
	out, err := n.Start(ctx, domain, planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	require.True(t, out.Domain.Authority.Assigned())
	return out.Domain
}

// domainOn reads the committed domain on m.
func domainOn(t testing.TB, m *cluster.Member, name string) lifecycle.Domain {
	t.Helper()
	d, err := m.Node().Domain(name)
	require.NoError(t, err)
	return d
}

// tickedBy reports whether m accepted a tick of domain produced under the
// authority identity id.
func tickedBy(m *cluster.Member, domain string, fence lifecycle.AuthorityFence) (clockrt.Tick, bool) {
	in := m.Node().Installation(domain)
	if in.Authority() != fence {
		return clockrt.Tick{}, false
	}
	tk := m.Node().Progress(domain)
	return tk, tk.ID > 0 && tk.Generation == in.Generation()
}
