package session

import (
	"context"
	"errors"
	"fmt"
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
	require.Equal(t, fmt.Sprintf("1 node, 1 available, raft term %d", e.node.Term()), res[0].Message)
	require.Empty(t, res[0].Warnings, "an embedded node leads and is available")
	require.Len(t, set.Rows, 3, "one node and every domain, paced or not")
	id := e.node.Identity()
	node, plain, dom := set.Rows[0], set.Rows[1], set.Rows[2]
	require.Equal(t, "plain", plain[set.Column("name")].Text())
	require.Equal(t, "UNPACED", plain[set.Column("pace")].Text())
	require.True(t, plain[set.Column("authority")].IsNull(), "an unpaced domain has no authority")
	require.True(t, plain[set.Column("period")].IsNull())
	require.Equal(t, "PACED", dom[set.Column("pace")].Text())
	require.Equal(t, "1s", dom[set.Column("period")].String())
	require.Equal(t, "0s", dom[set.Column("skew")].String())
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
		name     string
		st       wire.ClusterStatus
		err      error
		message  string
		rows     [][]string
		warnings []string
	}{
		{name: "sorted with an unassigned authority", st: wire.ClusterStatus{
			Nodes: []wire.ClusterNode{
				{Name: "n2", Incarnation: 7, Voter: true, Available: false, Revision: 9},
				{Name: "n1", Incarnation: 3, Voter: true, Leader: true, Available: true, Revision: 9},
				{Name: "n3", Incarnation: 4, Voter: true, Available: true, Revision: 9, Maintenance: "cordoned"},
			},
			Domains: []wire.ClusterDomain{
				paced(wire.NewClusterDomain("zeta", lifecycle.Running.String(), 2, wire.ClusterAuthority(lifecycle.AuthorityFence{Revision: 5}), nil), 1500e6, 1e9),
				paced(wire.NewClusterDomain("alpha", lifecycle.Running.String(), 1, wire.ClusterAuthority(lifecycle.AuthorityFence{Node: "n1", Incarnation: 3, Revision: 2}),
					&wire.ClockFailure{Domain: "alpha", Generation: 1, Message: "the report"}), 200e6, 0),
				unpaced(wire.NewClusterDomain("mid", lifecycle.Stopped.String(), 0, wire.ClusterAuthority{}, nil)),
			},
			Term: 4,
		}, message: "3 nodes, 2 available, raft term 4", rows: [][]string{
			{"node", "n1", "3", "yes", "yes", "yes", "9", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
			{"node", "n2", "7", "yes", "no", "no", "9", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
			{"node", "n3", "4", "yes", "no", "yes", "9", "NULL", "NULL", "cordoned", "NULL", "NULL", "NULL", "NULL"},
			{"domain", "alpha", "NULL", "NULL", "NULL", "NULL", "2", "n1#3", "1", "running", "the report", "PACED", "200ms", "0s"},
			{"domain", "mid", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "0", "stopped", "NULL", "UNPACED", "NULL", "NULL"},
			{"domain", "zeta", "NULL", "NULL", "NULL", "NULL", "5", "unassigned", "2", "running", "NULL", "PACED", "1.5s", "1s"},
		}, warnings: []string{
			"quorum at risk: 2 of 3 voters available, so one more loss stops every write",
			"not available: n2; their clocks move to other nodes, and a node that stays gone can be removed with nspl node remove",
			"running with no clock authority: zeta; they tick again once a live voter takes them (add or uncordon a node)",
			"clock failed at its authority: alpha; see the clock_failure column, and STOP and START the domain once its cause is fixed",
		}},
		{name: "no leader, quorum lost", st: wire.ClusterStatus{
			Nodes: []wire.ClusterNode{
				{Name: "n1", Incarnation: 3, Voter: true, Available: true},
				{Name: "n2", Incarnation: 7, Voter: true},
				{Name: "n3", Incarnation: 4, Voter: true},
			},
		}, message: "3 nodes, 1 available", rows: [][]string{
			{"node", "n1", "3", "yes", "no", "yes", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
			{"node", "n2", "7", "yes", "no", "no", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
			{"node", "n3", "4", "yes", "no", "no", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
		}, warnings: []string{
			"no node is the consensus leader: writes wait for an election; if none comes, check that a majority of the voters is running and can reach each other",
			"quorum lost: 1 of 3 voters available, and a majority is needed to commit; start or reconnect voters",
			"not available: n2, n3; their clocks move to other nodes, and a node that stays gone can be removed with nspl node remove",
		}},
		{name: "empty", st: wire.ClusterStatus{}, message: "0 nodes, 0 available", warnings: []string{
			"no node is the consensus leader: writes wait for an election; if none comes, check that a majority of the voters is running and can reach each other",
		}},
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
			require.Equal(t, tt.warnings, res[0].Warnings)
		})
	}
}

// paced is d with a paced domain's pace, period and skew.
func paced(d wire.ClusterDomain, period, skew uint64) wire.ClusterDomain {
	d.Pace, d.Period, d.Skew = lifecycle.Paced.String(), period, skew
	return d
}

// unpaced is d with an unpaced domain's pace.
func unpaced(d wire.ClusterDomain) wire.ClusterDomain {
	d.Pace = lifecycle.Unpaced.String()
	return d
}
