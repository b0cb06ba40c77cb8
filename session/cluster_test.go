package session

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

func TestShowClusterStatusEmbedded(t *testing.T) {
	e := newEnv(t, Options{})
	_, err := e.sess.ExecText(e.ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN plain; USE prod; START AT NOW;")
	require.NoError(t, err)
	res, err := e.sess.ExecText(e.ctx, "SHOW CLUSTER STATUS;")
	require.NoError(t, err)
	require.Len(t, res, 1)
	set := res[0].Set
	require.NotNil(t, set)
	require.Equal(t, "1 node, 1 available", res[0].Message)
	require.Len(t, set.Rows, 2, "one node and the paced domain only")
	id := e.node.Identity()
	node, dom := set.Rows[0], set.Rows[1]
	require.Equal(t, "node", node[set.Column("kind")].Text())
	require.Equal(t, id.Node, node[set.Column("name")].Text())
	require.Equal(t, id.Incarnation, node[set.Column("incarnation")].Uint())
	require.Equal(t, "yes", node[set.Column("leader")].Text())
	require.True(t, node[set.Column("authority")].IsNull())
	require.Equal(t, "domain", dom[set.Column("kind")].Text())
	require.Equal(t, "prod", dom[set.Column("name")].Text())
	require.Equal(t, id.String(), dom[set.Column("authority")].Text())
	require.Equal(t, uint64(1), dom[set.Column("generation")].Uint())
	require.Equal(t, "running", dom[set.Column("status")].Text())
	require.Equal(t, "SHOW CLUSTER STATUS;", res[0].Statement)
}

func TestShowClusterStatusSource(t *testing.T) {
	boom := errors.New("status unavailable")
	tests := []struct {
		name    string
		st      wire.ClusterStatus
		err     error
		message string
		rows    [][]string
	}{
		{name: "sorted with an unassigned authority", st: wire.ClusterStatus{
			Nodes: []wire.ClusterNode{
				{Name: "n2", Incarnation: 7, Voter: true, Available: false, Revision: 9},
				{Name: "n1", Incarnation: 3, Voter: true, Leader: true, Available: true, Revision: 9},
			},
			Domains: []wire.ClusterDomain{
				wire.NewClusterDomain("zeta", lifecycle.Running.String(), 2, wire.ClusterAuthority(lifecycle.AuthorityFence{Revision: 5}), nil),
				wire.NewClusterDomain("alpha", lifecycle.Running.String(), 1, wire.ClusterAuthority(lifecycle.AuthorityFence{Node: "n1", Incarnation: 3, Revision: 2}),
					&wire.ClockFailure{Domain: "alpha", Generation: 1, Message: "the report"}),
			},
		}, message: "2 nodes, 1 available", rows: [][]string{
			{"node", "n1", "3", "yes", "yes", "yes", "9", "NULL", "NULL", "NULL", "NULL"},
			{"node", "n2", "7", "yes", "no", "no", "9", "NULL", "NULL", "NULL", "NULL"},
			{"domain", "alpha", "NULL", "NULL", "NULL", "NULL", "2", "n1#3", "1", "running", "the report"},
			{"domain", "zeta", "NULL", "NULL", "NULL", "NULL", "5", "unassigned", "2", "running", "NULL"},
		}},
		{name: "empty", st: wire.ClusterStatus{}, message: "0 nodes, 0 available"},
		{name: "source fails", err: boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{ClusterStatus: func(context.Context) (wire.ClusterStatus, error) { return tt.st, tt.err }})
			res, err := e.sess.ExecText(e.ctx, "SHOW CLUSTER STATUS;")
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.message, res[0].Message)
			var got [][]string
			for _, row := range res[0].Set.Rows {
				var cells []string
				for _, v := range row {
					cells = append(cells, v.String())
				}
				got = append(got, cells)
			}
			require.Equal(t, tt.rows, got)
		})
	}
}
