package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

func TestClusterStatusAsWireShowsIt(t *testing.T) {
	fence := lifecycle.AuthorityFence{Node: "n2", Incarnation: 7, Revision: 4}
	for _, tc := range []struct {
		name string
		in   ClusterStatus
		want wire.ClusterStatus
	}{
		{name: "empty", in: ClusterStatus{Self: "n1"}, want: wire.ClusterStatus{}},
		{
			name: "registered nodes keep their name and advertised revision",
			in: ClusterStatus{Self: "n1", Nodes: []NodeStatus{
				{Name: "n1", Incarnation: 3, ServerID: "s1", Voter: true, Leader: true, Available: true, Self: true, AdvertisedRevision: 9},
				{Name: "n2", Incarnation: 7, ServerID: "s2", Voter: true, AdvertisedRevision: 8},
			}},
			want: wire.ClusterStatus{Nodes: []wire.ClusterNode{
				{Name: "n1", Incarnation: 3, Voter: true, Leader: true, Available: true, Revision: 9},
				{Name: "n2", Incarnation: 7, Voter: true, Revision: 8},
			}},
		},
		{
			name: "an unregistered raft server is named by its server id",
			in:   ClusterStatus{Nodes: []NodeStatus{{ServerID: "s3", RaftAddr: "127.0.0.1:1", Voter: true}}},
			want: wire.ClusterStatus{Nodes: []wire.ClusterNode{{Name: "s3", Voter: true}}},
		},
		{
			name: "domains carry pace, period, skew, status, generation and fence; the term travels",
			in: ClusterStatus{Term: 12, Domains: []DomainStatus{
				{Name: "prod", Pace: lifecycle.Paced, Period: 1e9, Skew: 5e8, Running: true, Generation: 2, Authority: fence, Revision: 5},
				{Name: "idle", Pace: lifecycle.Unpaced, Generation: 1, Revision: 6},
			}},
			want: wire.ClusterStatus{Term: 12, Domains: []wire.ClusterDomain{
				{Name: "prod", Status: "running", Generation: 2, Authority: wire.ClusterAuthority{Node: "n2", Incarnation: 7, Revision: 4}, Pace: "PACED", Period: 1e9, Skew: 5e8},
				{Name: "idle", Status: "stopped", Generation: 1, Pace: "UNPACED"},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.in.Wire())
		})
	}
}
