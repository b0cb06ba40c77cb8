package session

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// scaleStatus is a cluster status of one node and n running paced domains
// d000000…, every thousandth of them (d000000, d001000, …) with a clock
// failure, listed in reverse name order, as a source need not sort them.
func scaleStatus(n int) wire.ClusterStatus {
	st := wire.ClusterStatus{Nodes: []wire.ClusterNode{{Name: "n1", Incarnation: 1, Voter: true, Leader: true, Available: true}}}
	for i := n - 1; i >= 0; i-- {
		var failure *wire.ClockFailure
		if i%1000 == 0 {
			failure = &wire.ClockFailure{Domain: fmt.Sprintf("d%06d", i), Generation: 1, Message: "the report"}
		}
		st.Domains = append(st.Domains, wire.NewClusterDomain(fmt.Sprintf("d%06d", i), lifecycle.Running.String(), 1,
			wire.ClusterAuthority(lifecycle.AuthorityFence{Node: "n1", Incarnation: 1, Revision: 2}), failure))
	}
	return st
}

// TestShowClusterStatusAtScale holds SHOW CLUSTER STATUS to its domain-row
// bound at, just inside and just outside MaxClusterStatusDomains and at
// 100,000 domains: past the bound it shows the first domains by name and a
// warning counting the rest and their clock failures, and LIKE selects the
// domain rows by name (nodes are always shown).
func TestShowClusterStatusAtScale(t *testing.T) {
	require.Equal(t, 1000, MaxClusterStatusDomains, "the production bound")
	tests := []struct {
		domains  int
		text     string
		message  string
		rows     int    // domain rows
		last     string // the last domain row's name
		warning  string
		canonize string
	}{
		{domains: MaxClusterStatusDomains - 1, text: "SHOW CLUSTER STATUS;", message: "1 node, 1 available", rows: 999, last: "d000998"},
		{domains: MaxClusterStatusDomains, text: "SHOW CLUSTER STATUS;", message: "1 node, 1 available", rows: 1000, last: "d000999"},
		{domains: MaxClusterStatusDomains + 1, text: "SHOW CLUSTER STATUS;", message: "1 node, 1 available", rows: 1000, last: "d000999",
			warning: "showing the first 1000 of 1001 domains by name (1 of those left out have a clock failure); narrow the list with SHOW CLUSTER STATUS LIKE '<pattern>'"},
		{domains: 100000, text: "SHOW CLUSTER STATUS;", message: "1 node, 1 available", rows: 1000, last: "d000999",
			warning: "showing the first 1000 of 100000 domains by name (99 of those left out have a clock failure); narrow the list with SHOW CLUSTER STATUS LIKE '<pattern>'"},
		{domains: 100000, text: "show cluster status like 'D00000%';", message: "1 node, 1 available, 10 domains like 'd00000%'", rows: 10, last: "d000009",
			canonize: "SHOW CLUSTER STATUS LIKE 'd00000%';"},
		{domains: 100000, text: "SHOW CLUSTER STATUS LIKE 'd099999';", message: "1 node, 1 available, 1 domain like 'd099999'", rows: 1, last: "d099999"},
		{domains: 100000, text: "SHOW CLUSTER STATUS LIKE 'x%';", message: "1 node, 1 available, 0 domains like 'x%'", rows: 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.domains, " ", tt.text), func(t *testing.T) {
			st := scaleStatus(tt.domains)
			e := newEnv(t, Options{ClusterStatus: func(context.Context) (wire.ClusterStatus, error) { return st, nil }})
			res, err := e.sess.ExecText(e.ctx, tt.text)
			require.NoError(t, err)
			r := res[0]
			require.Equal(t, tt.message, r.Message)
			if tt.canonize != "" {
				require.Equal(t, tt.canonize, r.Statement)
			}
			require.Len(t, r.Set.Rows, 1+tt.rows)
			if tt.rows > 0 {
				require.Equal(t, tt.last, r.Set.Rows[len(r.Set.Rows)-1][1].Text())
			}
			if tt.warning == "" {
				require.Empty(t, r.Warnings)
			} else {
				require.Equal(t, []string{tt.warning}, r.Warnings)
			}
		})
	}
}
