package catalog

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestClusterConfigValidation(t *testing.T) {
	defer goleak.VerifyNone(t)
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS13}
	base := func() *ClusterConfig {
		return &ClusterConfig{RaftAddr: "127.0.0.1:0", ServerTLS: tlsCfg, ClientTLS: tlsCfg, Bootstrap: true}
	}
	cases := []struct {
		name string
		edit func(*ClusterConfig)
	}{
		{"no server TLS", func(c *ClusterConfig) { c.ServerTLS = nil }},
		{"no client TLS", func(c *ClusterConfig) { c.ClientTLS = nil }},
		{"no raft address", func(c *ClusterConfig) { c.RaftAddr = "" }},
		{"heartbeat below 5ms", func(c *ClusterConfig) { c.HeartbeatTimeout = 5*time.Millisecond - 1 }},
		{"election below 5ms", func(c *ClusterConfig) { c.ElectionTimeout = time.Millisecond }},
		{"lease above heartbeat", func(c *ClusterConfig) {
			c.HeartbeatTimeout = 100 * time.Millisecond
			c.LeaderLeaseTimeout = 100*time.Millisecond + 1
		}},
		{"unspecified address without advertise", func(c *ClusterConfig) { c.RaftAddr = "0.0.0.0:0" }},
		{"unresolvable advertise", func(c *ClusterConfig) { c.AdvertiseAddr = "no-port" }},
		{"unusable listen address", func(c *ClusterConfig) { c.RaftAddr = "256.0.0.1:1" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cc := base()
			c.edit(cc)
			_, err := Open(context.Background(), Config{NodeName: "n1", Cluster: cc})
			require.ErrorIs(t, err, ErrConfig)
		})
	}
	// The defaults and the boundary values are accepted.
	cc := base()
	got, err := cc.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultHeartbeatTimeout, got.HeartbeatTimeout)
	require.Equal(t, DefaultElectionTimeout, got.ElectionTimeout)
	require.Equal(t, DefaultLeaderLeaseTimeout, got.LeaderLeaseTimeout)
	require.Equal(t, DefaultTransportTimeout, got.TransportTimeout)
	require.Equal(t, DefaultAuthorityLease, got.AuthorityLease)
	// The lease follows the election timeout an operator raised, and a
	// lease given is kept.
	slow := base()
	slow.HeartbeatTimeout, slow.ElectionTimeout, slow.LeaderLeaseTimeout = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	got, err = slow.withDefaults()
	require.NoError(t, err)
	require.Equal(t, 750*time.Millisecond, got.AuthorityLease)
	slow.AuthorityLease = 2 * time.Second
	got, err = slow.withDefaults()
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, got.AuthorityLease)
	cc.HeartbeatTimeout, cc.ElectionTimeout, cc.LeaderLeaseTimeout = 5*time.Millisecond, 5*time.Millisecond, 5*time.Millisecond
	_, err = cc.withDefaults()
	require.NoError(t, err)
}

func TestHasState(t *testing.T) {
	dir := t.TempDir()
	require.False(t, HasState(""))
	require.False(t, HasState(dir))
	n, err := Open(context.Background(), Config{NodeName: "n1", DataDir: dir})
	require.NoError(t, err)
	require.NoError(t, n.Close())
	require.True(t, HasState(dir))
}
