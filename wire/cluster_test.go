package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewClusterDomain(t *testing.T) {
	fence := ClusterAuthority{Node: "n1", Incarnation: 3, Revision: 2}
	for _, tc := range []struct {
		name    string
		status  string
		fence   ClusterAuthority
		failure *ClockFailure
		want    ClusterDomain
	}{
		{"no failure", "running", fence, nil,
			ClusterDomain{Name: "d", Status: "running", Generation: 4, Authority: fence}},
		{"unassigned authority", "stopped", ClusterAuthority{Revision: 5}, nil,
			ClusterDomain{Name: "d", Status: "stopped", Generation: 4, Authority: ClusterAuthority{Revision: 5}}},
		{"a failure shows its report", "running", fence,
			&ClockFailure{Domain: "d", Generation: 4, Op: "project", Message: "the report"},
			ClusterDomain{Name: "d", Status: "running", Generation: 4, Authority: fence, ClockFailure: "the report"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, NewClusterDomain("d", tc.status, 4, tc.fence, tc.failure))
		})
	}
}
