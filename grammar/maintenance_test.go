package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseNodeMaintenance covers CORDON, UNCORDON and DRAIN NODE: the
// three spellings of a node name, its case kept, and the refusals.
func TestParseNodeMaintenance(t *testing.T) {
	tests := []struct {
		src, action, name, err string
	}{
		{src: "CORDON NODE n1", action: "CORDON", name: "n1"},
		{src: "uncordon node Node-A", err: "expected"},
		{src: "uncordon node `Node-A`", action: "UNCORDON", name: "Node-A"},
		{src: "drain node 'node-b'", action: "DRAIN", name: "node-b"},
		{src: "drain node `a_b`", err: "only ASCII letters, digits and '-'"},
		{src: "drain node `-a`", err: "cannot start or end with '-'"},
		{src: "drain node ''", err: "cannot be empty"},
		{src: "cordon n1", err: "NODE"},
		{src: "cordon node", err: "expected"},
		{src: "cordon node a b", err: "expected"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			st, err := ParseStatement(tt.src)
			if tt.err != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			m, ok := st.(*NodeMaintenance)
			require.True(t, ok, "%T", st)
			require.Equal(t, tt.action, m.Action)
			require.Equal(t, tt.name, m.Name.Value)
		})
	}
}
