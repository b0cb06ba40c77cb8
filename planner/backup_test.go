package planner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var backupPlanCases = []struct {
	src       string
	want      Plan
	canonical string
}{
	{"backup cluster to '/b/all'", Backup{Cluster: true, Path: "/b/all"}, "BACKUP CLUSTER TO '/b/all';"},
	{"BACKUP DOMAIN TO \"~/it's\"", Backup{Path: "~/it's"}, "BACKUP DOMAIN TO '~/it''s';"},
	{"BACKUP DOMAIN Prod TO 'p'", Backup{Domain: "prod", Path: "p"}, "BACKUP DOMAIN prod TO 'p';"},
	{"BACKUP DOMAIN `run` TO 'p'", Backup{Domain: "run", Path: "p"}, "BACKUP DOMAIN `run` TO 'p';"},
	{"RESTORE CLUSTER FROM 'p'", Restore{Cluster: true, Path: "p"}, "RESTORE CLUSTER FROM 'p';"},
	{"restore cluster from 'p' resume dry run", Restore{Cluster: true, Path: "p", Resume: true, DryRun: true}, "RESTORE CLUSTER FROM 'p' RESUME DRY RUN;"},
	{"RESTORE DOMAIN prod FROM 'p' RESUME", Restore{Domain: "prod", Path: "p", Resume: true}, "RESTORE DOMAIN prod FROM 'p' RESUME;"},
	{"RESTORE DOMAIN prod AS `prod-2` FROM 'p' DRY RUN", Restore{Domain: "prod", As: "prod-2", Path: "p", DryRun: true}, "RESTORE DOMAIN prod AS `prod-2` FROM 'p' DRY RUN;"},
	{"RESTORE DOMAIN prod AS prod FROM 'p'", Restore{Domain: "prod", As: "prod", Path: "p"}, "RESTORE DOMAIN prod AS prod FROM 'p';"},
	{"DESCRIBE BACKUP 'a\nb'", DescribeBackup{Path: "a\nb"}, "DESCRIBE BACKUP 'a\nb';"},
}

func TestPlanBackupStatements(t *testing.T) {
	for _, tc := range backupPlanCases {
		t.Run(tc.src, func(t *testing.T) {
			plans, err := PlanScript(tc.src)
			require.NoError(t, err)
			require.Len(t, plans, 1)
			require.Equal(t, tc.want, unplaced(plans[0]))
			require.Equal(t, tc.canonical, plans[0].String())
			again, err := PlanScript(plans[0].String())
			require.NoError(t, err)
			require.Equal(t, tc.want, unplaced(again[0]))
		})
	}
	require.Equal(t, "prod-2", Restore{Domain: "prod", As: "prod-2"}.Target())
	require.Equal(t, "prod", Restore{Domain: "prod"}.Target())
	require.Equal(t, "", Restore{Cluster: true}.Target())
}

// FuzzBackupRoundTrip checks that every backup plan prints canonical text
// that plans to the same values and is a fixed point.
func FuzzBackupRoundTrip(f *testing.F) {
	for _, tc := range backupPlanCases {
		f.Add(tc.src)
		f.Add(tc.canonical)
	}
	f.Fuzz(func(t *testing.T, src string) {
		plans, _ := PlanScript(src)
		for _, p := range plans {
			switch p.(type) {
			case Backup, Restore, DescribeBackup:
			default:
				continue
			}
			text := p.String()
			again, err := PlanScript(text)
			require.NoError(t, err, text)
			require.Len(t, again, 1, text)
			require.Equal(t, unplaced(p), unplaced(again[0]), text)
			require.Equal(t, text, again[0].String())
		}
	})
}
