package session

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// TestNodeMaintenanceStatements runs CORDON, UNCORDON and DRAIN NODE on one
// embedded node: messages, the status value SHOW CLUSTER STATUS gives the
// node row, the refusals.
func TestNodeMaintenanceStatements(t *testing.T) {
	e := newEnv(t, Options{})
	name := e.node.Name()
	var _ Maintainer = e.node // a node is a Maintainer
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START;")

	require.Contains(t, e.msg("CORDON NODE "+name+";"), "cordoned node '"+name+"'")
	require.Equal(t, "node '"+name+"' is already cordoned", e.msg("CORDON NODE "+name+";"))
	status := func() string {
		rs := e.exec("SHOW CLUSTER STATUS;")
		row := rs[0].Set.Rows[0]
		require.Equal(t, "node", row[0].Text())
		if row[9].IsNull() {
			return "in service"
		}
		return row[9].Text()
	}
	require.Equal(t, lifecycle.MaintenanceDraining, status())

	err := e.fail("DRAIN NODE " + name + ";")
	var le *lifecycle.Error
	require.True(t, errors.As(err, &le), "%T %v", err, err)
	require.Equal(t, lifecycle.CodeNoLiveVoter, le.Code)
	require.Contains(t, err.Error(), "still owns the clock of 'prod'")

	e.exec("STOP;")
	require.Equal(t, lifecycle.MaintenanceCordoned, status())
	rs := e.exec("DRAIN NODE " + name + ";")
	require.Empty(t, rs[0].Set.Rows)
	require.Contains(t, rs[0].Message, "moved 0 clocks")

	require.Contains(t, e.msg("UNCORDON NODE "+name+";"), "uncordoned node")
	require.Equal(t, "in service", status())

	err = e.fail("CORDON NODE ghost;")
	require.True(t, errors.As(err, &le))
	require.Equal(t, lifecycle.CodeUnknownNode, le.Code)

	e.exec("BEGIN;")
	for _, stmt := range []string{"CORDON NODE " + name, "UNCORDON NODE " + name, "DRAIN NODE " + name} {
		err = e.fail(stmt + ";")
		require.ErrorIs(t, err, ErrInTransaction)
		require.Contains(t, err.Error(), "cannot be queued in a transaction")
	}
	e.exec("REVERT;")
}
