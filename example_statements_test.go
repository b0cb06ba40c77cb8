package nspl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nspl-dev/nspl"
)

// Builders print canonical NSPL, the text nspl fmt leaves as it is, for a
// Follower's ExecText or a script file: names are quoted where they need
// it and a path's quote is doubled.
func ExampleScript() {
	text, err := nspl.Script(
		nspl.CreatePaced("Prod-1", time.Second, 100*time.Millisecond).Placement(nspl.PlacementPreferColocation),
		nspl.Use("prod-1"),
		nspl.AlterPlacement(nspl.PlacementSuggestSeparation),
		nspl.BackupDomain("", "~/it's prod.nsplbak"),
		nspl.RestoreDomain("prod-1", "~/it's prod.nsplbak").As("prod_copy").DryRun(),
		nspl.ShowClusterStatusLike("prod%"),
		nspl.ShowTransactions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// CREATE PACED DOMAIN `prod-1` WITH PERIOD 1s SKEW 100ms PLACEMENT PREFER COLOCATION;
	// USE `prod-1`;
	// ALTER DOMAIN SET PLACEMENT SUGGEST SEPARATION;
	// BACKUP DOMAIN TO '~/it''s prod.nsplbak';
	// RESTORE DOMAIN `prod-1` AS prod_copy FROM '~/it''s prod.nsplbak' DRY RUN;
	// SHOW CLUSTER STATUS LIKE 'prod%';
	// SHOW TRANSACTIONS;
}

// An embedding program backs a domain up to a file of its own machine,
// describes the archive and plans a restore under a new name without
// changing anything. Each cell prints as the shell prints it.
func ExampleBackupDomain() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "nspl-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "prod.nsplbak")

	eng, err := nspl.Open(ctx, nspl.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	sess, err := eng.NewSession()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	results, err := sess.Exec(ctx,
		nspl.CreatePaced("prod", 1500*time.Millisecond, 10*time.Millisecond).Placement(nspl.PlacementRequireColocation),
		nspl.BackupDomain("prod", archive),
		nspl.DescribeBackup(archive),
		nspl.RestoreDomain("prod", archive).As("prod_copy").DryRun())
	if err != nil {
		fmt.Println(err)
		return
	}
	described, planned := results[2].Set, results[3].Set
	row := described.Rows[0]
	for _, col := range []string{"name", "pace", "period", "skew", "placement", "start_point"} {
		fmt.Println(col, row[described.Column(col)])
	}
	row = planned.Rows[0]
	fmt.Println("restore", row[planned.Column("source")], "as", row[planned.Column("name")], row[planned.Column("status")])
	// Output:
	// name prod
	// pace PACED
	// period 1.5s
	// skew 10ms
	// placement REQUIRE COLOCATION
	// start_point NULL
	// restore prod as prod_copy stopped
}
