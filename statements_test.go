package nspl_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
)

// Builders print canonical NSPL that plans back to the same statement:
// names in any case are stored lower-case and quoted where they need it,
// instants, durations and rates read back exactly.
func TestStatementText(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 1, time.FixedZone("CET", 3600))
	tests := []struct {
		st   nspl.Statement
		want string
	}{
		{nspl.Use("Prod"), "USE prod;"},
		{nspl.Use("prod-1"), "USE `prod-1`;"},
		{nspl.Use("clock"), "USE `clock`;"},
		{nspl.Use("`Ops`"), "USE ops;"},
		{nspl.Create("dev"), "CREATE UNPACED DOMAIN dev PLACEMENT NEUTRAL;"},
		{nspl.Create("dev").IfNotExists(), "CREATE IF NOT EXISTS UNPACED DOMAIN dev PLACEMENT NEUTRAL;"},
		{nspl.CreatePaced("prod", time.Second, 100*time.Millisecond), "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms PLACEMENT NEUTRAL;"},
		{nspl.Start(), "START;"},
		{nspl.Start().AtNow(), "START AT NOW TIME RATE 1;"},
		{nspl.Start().Rate(2), "START AT NOW TIME RATE 2;"},
		{nspl.Start().At(origin).Rate(0.5), "START AT '2025-12-31T23:00:00.000000001Z' TIME RATE 0.5;"},
		{nspl.Start().Rate(60).At(origin), "START AT '2025-12-31T23:00:00.000000001Z' TIME RATE 60;"},
		{nspl.Stop(), "STOP;"},
		{nspl.Attach(), "ATTACH DOMAIN CLOCK;"},
		{nspl.Detach(), "DETACH DOMAIN CLOCK;"},
		{nspl.ListDomains(), "LIST DOMAINS;"},
		{nspl.ListDomainsLike("Web-%"), "LIST DOMAINS LIKE 'web-%';"},
		{nspl.Describe(""), "DESCRIBE DOMAIN;"},
		{nspl.Describe("Prod"), "DESCRIBE DOMAIN prod;"},
		{nspl.Drop("prod"), "DROP DOMAIN prod;"},
		{nspl.Drop("prod").IfExists(), "DROP DOMAIN IF EXISTS prod;"},
		{nspl.Begin(), "BEGIN;"},
		{nspl.Commit(), "COMMIT;"},
		{nspl.Revert(), "REVERT;"},
		{nspl.Create("dev").Placement(nspl.PlacementRequireColocation), "CREATE UNPACED DOMAIN dev PLACEMENT REQUIRE COLOCATION;"},
		{nspl.CreatePaced("prod", time.Second, 0).Placement(nspl.PlacementSuggestSeparation).IfNotExists(),
			"CREATE IF NOT EXISTS PACED DOMAIN prod WITH PERIOD 1s SKEW 0s PLACEMENT SUGGEST SEPARATION;"},
		{nspl.AlterPlacement(nspl.PlacementNeutral), "ALTER DOMAIN SET PLACEMENT NEUTRAL;"},
		{nspl.AlterPlacement(nspl.PlacementPreferColocation), "ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;"},
		{nspl.ShowClusterStatus(), "SHOW CLUSTER STATUS;"},
		{nspl.ShowClusterStatusLike("Prod%"), "SHOW CLUSTER STATUS LIKE 'prod%';"},
		{nspl.ShowTransactions(), "SHOW TRANSACTIONS;"},
		{nspl.DescribeTransaction(), "DESCRIBE TRANSACTION;"},
		{nspl.CordonNode("n1"), "CORDON NODE n1;"},
		{nspl.UncordonNode("node-a"), "UNCORDON NODE `node-a`;"},
		{nspl.DrainNode("N3"), "DRAIN NODE N3;"},
		{nspl.BackupCluster("~/all.nsplbak"), "BACKUP CLUSTER TO '~/all.nsplbak';"},
		{nspl.BackupDomain("", "prod.nsplbak"), "BACKUP DOMAIN TO 'prod.nsplbak';"},
		{nspl.BackupDomain("Prod-1", "it's here.nsplbak"), "BACKUP DOMAIN `prod-1` TO 'it''s here.nsplbak';"},
		{nspl.DescribeBackup("backups/prod.nsplbak"), "DESCRIBE BACKUP 'backups/prod.nsplbak';"},
		{nspl.RestoreCluster("all.nsplbak"), "RESTORE CLUSTER FROM 'all.nsplbak';"},
		{nspl.RestoreCluster("all.nsplbak").Resume().DryRun(), "RESTORE CLUSTER FROM 'all.nsplbak' RESUME DRY RUN;"},
		{nspl.RestoreDomain("prod", "prod.nsplbak"), "RESTORE DOMAIN prod FROM 'prod.nsplbak';"},
		{nspl.RestoreDomain("Prod", "prod.nsplbak").As("Clock").Resume(), "RESTORE DOMAIN prod AS `clock` FROM 'prod.nsplbak' RESUME;"},
		{nspl.RestoreDomain("prod", "prod.nsplbak").DryRun().As("prod_copy"), "RESTORE DOMAIN prod AS prod_copy FROM 'prod.nsplbak' DRY RUN;"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.NoError(t, tt.st.Err())
			require.Equal(t, tt.want, tt.st.String())
			plans, err := planner.PlanScript(tt.st.String())
			require.NoError(t, err)
			require.Len(t, plans, 1)
			require.Equal(t, tt.want, plans[0].String(), "the text plans back to the same statement")
			formatted, err := grammar.Format(tt.st.String())
			require.NoError(t, err)
			require.Equal(t, tt.want+"\n", formatted, "nspl fmt leaves the text as it is")
			stmt, err := grammar.ParseStatement(tt.st.String())
			require.NoError(t, err)
			covered[reflect.TypeOf(stmt).Elem().Name()] = true
		})
	}
	require.Equal(t, astStatements(t), covered, "every statement of the grammar has a builder here")
}

// astStatements returns the name of every statement type grammar/ast.go
// declares (each has a statement() method), so a statement added to the
// grammar without a builder fails TestStatementText.
func astStatements(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("grammar", "ast.go"), nil, 0)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "statement" || fn.Recv == nil || len(fn.Recv.List) != 1 {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok {
				names[id.Name] = true
			}
		}
	}
	require.NotEmpty(t, names, "grammar/ast.go declares no statement types; was it renamed?")
	return names
}

// A value no statement can hold is the statement's error, with the
// sentinel a written statement would fail with.
func TestStatementErrors(t *testing.T) {
	tests := []struct {
		name string
		st   nspl.Statement
		want error
	}{
		{"dotted name", nspl.Use("prod.eu"), nspl.ErrInvalidName},
		{"empty name", nspl.Drop(""), nspl.ErrInvalidName},
		{"name with a space", nspl.Create("my domain"), nspl.ErrInvalidName},
		{"pattern with a space", nspl.ListDomainsLike("web %"), nspl.ErrInvalidPattern},
		{"empty pattern", nspl.ListDomainsLike(""), nspl.ErrInvalidPattern},
		{"negative period", nspl.CreatePaced("prod", -time.Second, 0), nspl.ErrInvalidDuration},
		{"negative skew", nspl.CreatePaced("prod", time.Second, -1), nspl.ErrInvalidDuration},
		{"instant past 2262", nspl.Start().At(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), nspl.ErrInvalidTimestamp},
		{"zero rate", nspl.Start().Rate(0), nspl.ErrInvalidRate},
		{"negative rate", nspl.Start().AtNow().Rate(-1), nspl.ErrInvalidRate},
		{"NaN rate", nspl.Start().Rate(math.NaN()), nspl.ErrInvalidRate},
		{"infinite rate", nspl.Start().Rate(math.Inf(1)), nspl.ErrInvalidRate},
		{"first error kept", nspl.Start().Rate(0).At(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), nspl.ErrInvalidRate},
		{"unknown placement", nspl.Create("prod").Placement(nspl.Placement(9)), nspl.ErrSyntax},
		{"unknown altered placement", nspl.AlterPlacement(nspl.Placement(9)), nspl.ErrSyntax},
		{"cluster status pattern", nspl.ShowClusterStatusLike("a b"), nspl.ErrInvalidPattern},
		{"empty backup path", nspl.BackupCluster(""), nspl.ErrInvalidPath},
		{"NUL in a backup path", nspl.BackupDomain("prod", "a\x00b"), nspl.ErrInvalidPath},
		{"backup domain name", nspl.BackupDomain("prod.eu", "prod.nsplbak"), nspl.ErrInvalidName},
		{"empty describe path", nspl.DescribeBackup(""), nspl.ErrInvalidPath},
		{"node name ending in a dash", nspl.CordonNode("n1-"), nspl.ErrInvalidName},
		{"empty node name", nspl.DrainNode(""), nspl.ErrInvalidName},
		{"node name past 63 bytes", nspl.UncordonNode(strings.Repeat("n", 64)), nspl.ErrInvalidName},
		{"empty restore path", nspl.RestoreCluster("").DryRun(), nspl.ErrInvalidPath},
		{"restore domain name", nspl.RestoreDomain("", "prod.nsplbak"), nspl.ErrInvalidName},
		{"restore new name", nspl.RestoreDomain("prod", "prod.nsplbak").As("a/b"), nspl.ErrInvalidName},
		{"restore cluster as", nspl.RestoreCluster("all.nsplbak").As("copy"), nspl.ErrSyntax},
		{"first restore error kept", nspl.RestoreDomain("prod", "").As("a/b"), nspl.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.st.Err(), tt.want)
			require.Empty(t, tt.st.String())
			_, err := nspl.Script(nspl.ListDomains(), tt.st)
			var e *nspl.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, 2, e.Pos.Line, "the error names the second statement")
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// Exec runs the statements before one holding an error and reports it on
// its line; statement errors of the engine are positioned the same way and
// match the root's sentinels.
func TestExecStatements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := nspl.Open(ctx, nspl.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	sess, err := eng.NewSession()
	require.NoError(t, err)

	results, err := sess.Exec(ctx, nspl.Create("Dev"), nspl.Use("prod.eu"), nspl.Drop("dev"))
	var e *nspl.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, nspl.Position{Line: 2, Column: 1}, e.Pos)
	require.ErrorIs(t, err, nspl.ErrInvalidName)
	require.Len(t, results, 1)
	require.Equal(t, "created domain 'dev'", results[0].Message)

	results, err = sess.Exec(ctx, nspl.Use("DEV"), nspl.Create("dev"))
	require.ErrorIs(t, err, nspl.ErrDomainExists)
	require.True(t, errors.As(err, &e))
	require.Equal(t, 2, e.Pos.Line)
	require.Len(t, results, 1)
	_, err = sess.Exec(ctx, nspl.Describe("nope"))
	require.ErrorIs(t, err, nspl.ErrNotFound)
	_, err = sess.Exec(ctx, nspl.Stop())
	require.ErrorIs(t, err, nspl.ErrAlreadyStopped)
	_, err = sess.Exec(ctx, nspl.Detach())
	require.ErrorIs(t, err, nspl.ErrNotAttached)
	results, err = sess.Exec(ctx)
	require.NoError(t, err)
	require.Empty(t, results)
}

// Reopening a DataDir resumes the running domain, so START AT NOW on it is
// refused with the root's sentinel, and its clock is followed again.
func TestReopenedDataDirRefusesStartWithRootSentinel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	eng, err := nspl.Open(ctx, nspl.Options{DataDir: dir})
	require.NoError(t, err)
	sess, err := eng.NewSession()
	require.NoError(t, err)
	_, err = sess.Exec(ctx, nspl.CreatePaced("prod", time.Second, 0), nspl.Use("prod"), nspl.Start().AtNow())
	require.NoError(t, err)
	require.NoError(t, eng.Close())

	eng, err = nspl.Open(ctx, nspl.Options{DataDir: dir})
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	sess, err = eng.NewSession()
	require.NoError(t, err)
	results, err := sess.Exec(ctx, nspl.Use("PROD"), nspl.Start().AtNow())
	require.ErrorIs(t, err, nspl.ErrAlreadyRunning)
	require.Len(t, results, 1)
	_, err = sess.Exec(ctx, nspl.Attach())
	require.NoError(t, err)
	c, ok := sess.Clock("Prod")
	require.True(t, ok)
	require.Equal(t, nspl.Paced, c.Observed.State)
}

// textStatement is a Statement of another package: its text is all it has.
type textStatement string

func (s textStatement) String() string { return string(s) }
func (textStatement) Err() error       { return nil }

// Exec runs the plans the builders hold: it prints no statement as text to
// parse it again, so a run of builders parses nothing, while a Statement of
// another package, which has only its text, is parsed once and positioned
// on its own line like the others.
func TestExecParsesNoBuiltStatement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := nspl.Open(ctx, nspl.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	sess, err := eng.NewSession()
	require.NoError(t, err)

	before := grammar.Parses()
	results, err := sess.Exec(ctx, nspl.Create("dev"), nspl.Use("dev"), nspl.Start().AtNow().Rate(2), nspl.Attach(), nspl.Detach(), nspl.Stop())
	require.NoError(t, err)
	require.Len(t, results, 6)
	require.Equal(t, uint64(0), grammar.Parses()-before, "Exec parsed a statement built from Go values")
	require.Equal(t, "START AT NOW TIME RATE 2;", results[2].Statement)

	results, err = sess.Exec(ctx, nspl.Describe("dev"), textStatement("DESCRIBE DOMAIN dev;"), textStatement("USE\n  nope;"))
	require.Equal(t, uint64(2), grammar.Parses()-before)
	require.Len(t, results, 2)
	var e *nspl.Error
	require.ErrorAs(t, err, &e)
	require.ErrorIs(t, err, nspl.ErrNotFound)
	require.Equal(t, nspl.Position{Line: 3, Column: 1}, e.Pos)
}

// The administration builders run their plans on an engine: ALTER changes
// the active domain's placement, SHOW TRANSACTIONS and SHOW CLUSTER STATUS
// answer with their result sets, and a refused path stops Exec on its line.
func TestExecAdminStatements(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eng, err := nspl.Open(ctx, nspl.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, eng.Close()) }()
	sess, err := eng.NewSession()
	require.NoError(t, err)

	results, err := sess.Exec(ctx, nspl.Create("prod"), nspl.Use("prod"),
		nspl.AlterPlacement(nspl.PlacementPreferColocation), nspl.Describe(""),
		nspl.Begin(), nspl.Start(), nspl.ShowTransactions(), nspl.Revert(),
		nspl.ShowClusterStatusLike("prod"))
	require.NoError(t, err)
	require.Len(t, results, 9)
	require.Equal(t, "set placement of domain 'prod' to PREFER COLOCATION", results[2].Message)
	desc := results[3].Set
	require.Equal(t, "PREFER COLOCATION", desc.Rows[0][desc.Column("placement")].String())
	require.NotNil(t, results[6].Set)
	require.Len(t, results[6].Set.Rows, 1, "SHOW TRANSACTIONS shows the open transaction")
	require.NotNil(t, results[8].Set)

	_, err = sess.Exec(ctx, nspl.ListDomains(), nspl.DescribeBackup(""))
	var e *nspl.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 2, e.Pos.Line)
	require.ErrorIs(t, err, nspl.ErrInvalidPath)
}
