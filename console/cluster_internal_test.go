package console

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

// statusTable builds a SHOW CLUSTER STATUS table of the named columns from
// rows of column=value pairs; a column a row does not name is null.
func statusTable(columns []string, rows ...map[string]string) *table {
	t := &table{Columns: columns}
	for _, r := range rows {
		out := make([]*string, len(columns))
		for i, c := range columns {
			if v, ok := r[c]; ok {
				out[i] = strp(v)
			}
		}
		t.Rows = append(t.Rows, out)
	}
	return t
}

func texts(vt viewTable) (cols []string, rows [][]string) {
	for _, c := range vt.Columns {
		cols = append(cols, c.Name)
	}
	for _, r := range vt.Rows {
		var out []string
		for _, c := range r {
			out = append(out, c.Text)
		}
		rows = append(rows, out)
	}
	return cols, rows
}

// TestClusterViewReadsColumnsByName: the cluster page splits nodes from
// domains, drops the columns null for all of a table's rows, finds the
// leader and counts the available nodes by the columns' names, whatever
// their order, and shows columns it does not know by their names.
func TestClusterViewReadsColumnsByName(t *testing.T) {
	today := []string{"kind", "name", "incarnation", "voter", "leader", "available", "revision", "authority", "generation", "status", "clock_failure"}
	// The same columns in another order, with columns added.
	later := []string{"name", "raft_term", "kind", "cordoned", "available", "leader", "voter", "incarnation", "revision", "pace", "authority",
		"period", "skew", "generation", "status", "warnings", "clock_failure"}
	rows := []map[string]string{
		{"kind": "node", "name": "n1", "incarnation": "10692864355003584225", "voter": "yes", "leader": "no", "available": "yes", "revision": "11",
			"raft_term": "3", "cordoned": "no"},
		{"kind": "node", "name": "n2", "incarnation": "2856040683881470152", "voter": "yes", "leader": "yes", "available": "yes", "revision": "11",
			"raft_term": "3", "cordoned": "yes"},
		{"kind": "node", "name": "n3", "incarnation": "12121582624362685461", "voter": "no", "leader": "no", "available": "no", "revision": "9",
			"raft_term": "3", "cordoned": "no"},
		{"kind": "domain", "name": "web", "revision": "4", "authority": "n3#12121582624362685461", "generation": "2", "status": "running",
			"pace": "PACED", "period": "1s", "skew": "10ms", "warnings": "authority unavailable"},
	}
	for _, tc := range []struct {
		name       string
		columns    []string
		nodeCols   []string
		domainCols []string
	}{
		{"today's columns", today,
			[]string{"name", "incarnation", "voter", "leader", "available", "revision"},
			[]string{"name", "revision", "authority", "generation", "status"}},
		{"reordered, with more", later,
			[]string{"name", "raft_term", "cordoned", "available", "leader", "voter", "incarnation", "revision"},
			[]string{"name", "revision", "pace", "authority", "period", "skew", "generation", "status", "warnings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newClusterView(statusTable(tc.columns, rows...))
			require.Equal(t, "n2", v.Leader)
			require.Equal(t, 3, v.Nodes)
			require.Equal(t, 2, v.Available)
			require.Equal(t, 1, v.Domains)
			require.Nil(t, v.Other)

			cols, nodes := texts(v.NodeTable)
			require.Equal(t, tc.nodeCols, cols)
			require.Len(t, nodes, 3)
			at := func(cols []string, name string) int {
				for i, c := range cols {
					if c == name {
						return i
					}
				}
				t.Fatalf("no column %s in %v", name, cols)
				return -1
			}
			inc := v.NodeTable.Rows[0][at(cols, "incarnation")]
			require.Equal(t, cell{Text: "106928…", Title: "10692864355003584225", Class: "id"}, inc, "a short id, the whole on hover")
			require.Equal(t, "leader", v.NodeTable.Rows[1][0].Badge)
			require.Empty(t, v.NodeTable.Rows[0][0].Badge)
			require.Equal(t, "leader", nodes[1][at(cols, "leader")])
			require.Equal(t, "follower", nodes[0][at(cols, "leader")])
			require.Equal(t, "non-voter", nodes[2][at(cols, "leader")])
			require.Equal(t, "unavailable", nodes[2][at(cols, "available")])

			dcols, domains := texts(v.DomainTable)
			require.Equal(t, tc.domainCols, dcols)
			require.Equal(t, "web", domains[0][0])
			auth := v.DomainTable.Rows[0][at(dcols, "authority")]
			require.Equal(t, cell{Text: "n3 #121215…", Title: "n3#12121582624362685461", Class: "id"}, auth)
			for _, tbl := range []viewTable{v.NodeTable, v.DomainTable} {
				for _, c := range tbl.Columns {
					require.NotEqual(t, "kind", c.Name)
				}
				for _, r := range tbl.Rows {
					for _, c := range r {
						require.NotContains(t, strings.ToUpper(c.Text), "NULL")
					}
				}
			}
		})
	}
}

// TestClusterViewUnknownColumnsAndKinds: a column the console does not
// know is labelled by its name and shown as written; a row of a kind it
// does not know is kept in a table of its own; a status without the
// available column counts no availability.
func TestClusterViewUnknownColumnsAndKinds(t *testing.T) {
	v := newClusterView(statusTable([]string{"kind", "name", "queue_depth", "leader"},
		map[string]string{"kind": "node", "name": "n1", "queue_depth": "7", "leader": "yes"},
		map[string]string{"kind": "witness", "name": "w1", "queue_depth": "0"},
	))
	require.Equal(t, -1, v.Available)
	require.Equal(t, "n1", v.Leader)
	require.Equal(t, viewColumn{Name: "queue_depth", Label: "Queue depth"}, v.NodeTable.Columns[1])
	require.Equal(t, "7", v.NodeTable.Rows[0][1].Text)
	require.NotNil(t, v.Other)
	cols, rows := texts(*v.Other)
	require.Equal(t, []string{"name", "kind", "queue_depth"}, cols)
	require.Equal(t, [][]string{{"w1", "witness", "0"}}, rows)
	require.Empty(t, v.DomainTable.Rows)
	require.Nil(t, newClusterView(nil))
}

// TestListViewHasNoNulls: the domain list's null cells are empty and its
// authority short, the whole on hover.
func TestListViewHasNoNulls(t *testing.T) {
	vt := listView(statusTable(listColumns,
		map[string]string{"name": "utc", "pace": "UNPACED", "status": "running", "generation": "1", "placement": "NEUTRAL"},
		map[string]string{"name": "web", "pace": "PACED", "status": "running", "generation": "1", "placement": "NEUTRAL", "authority": "n2#16726652204012345678"},
	))
	require.Equal(t, cell{}, vt.Rows[0][5])
	require.Equal(t, cell{Text: "n2 #167266…", Title: "n2#16726652204012345678", Class: "id"}, vt.Rows[1][5])
	require.Equal(t, "Authority", vt.Columns[5].Label)
	for in, want := range map[string]cell{
		"n2#16726652204012345678@4": {Text: "n2 #167266… @4", Title: "n2#16726652204012345678@4", Class: "id"},
		"unassigned@0":              {Text: "unassigned@0", Class: "muted"},
		"unassigned":                {Text: "unassigned", Class: "muted"},
		"n2#7@1":                    {Text: "n2#7@1"},
	} {
		require.Equal(t, want, authorityCell(in), in)
	}
}
