package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/wire"
)

func TestBackupStatements(t *testing.T) {
	e := newEnv(t, Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "all.nsplbak")
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms; CREATE DOMAIN web; USE prod; START AT '2026-01-01T00:00:00Z' TIME RATE 60;")
	e.waitTick("prod", 1)

	r := e.exec("BACKUP CLUSTER TO '" + path + "';")[0]
	require.Regexp(t, `^backed up cluster \(2 domains\) to '`+path+`' \(\d+ bytes, captured at 2026-01-01T00:00:00Z\)$`, r.Message)
	require.Equal(t, "BACKUP CLUSTER TO '"+path+"';", r.Statement)
	require.Len(t, r.Set.Rows, 2)
	require.Equal(t, "prod", r.Set.Rows[0][0].Text())
	require.Equal(t, uint64(1), r.Set.Rows[0][5].Uint(), "the frontier tick at capture")

	// BACKUP DOMAIN without a name backs up the active domain.
	one := filepath.Join(dir, "prod.nsplbak")
	r = e.exec("BACKUP DOMAIN TO '" + one + "';")[0]
	require.Equal(t, "prod", r.Domain)
	require.Contains(t, r.Message, "backed up domain 'prod' to '"+one+"'")

	// DESCRIBE BACKUP reads and verifies the archive.
	r = e.exec("DESCRIBE BACKUP '" + path + "';")[0]
	require.Equal(t, "backup '"+path+"': format version 1, scope cluster, captured at 2026-01-01T00:00:00Z by node 'local' at catalog revision 4, 2 domains", r.Message)
	set := r.Set
	require.Len(t, set.Rows, 2)
	row := set.Rows[0]
	get := func(col string) wire.Value { return row[set.Column(col)] }
	require.Equal(t, "prod", get("name").Text())
	require.Equal(t, "PACED", get("pace").Text())
	require.Equal(t, "1s", get("period").String())
	require.Equal(t, "100ms", get("skew").String())
	require.Equal(t, "running", get("status").Text())
	require.Equal(t, uint64(1), get("generation").Uint())
	require.Equal(t, "at", get("start_mode").Text())
	require.Equal(t, "2026-01-01T00:00:00Z", get("mapping_logical_start").String())
	require.Equal(t, "60", get("mapping_time_rate").String())
	require.Equal(t, uint64(1), get("frontier_tick").Uint())
	require.Equal(t, "2026-01-01T00:00:00Z", get("frontier_boundary").String())
	require.Equal(t, "2026-01-01T00:00:00Z", get("logical_now").String())
	row = set.Rows[1]
	require.Equal(t, "web", get("name").Text())
	require.True(t, get("period").IsNull())
	require.True(t, get("generation").Uint() == 0 && get("start_point").IsNull() && get("mapping_time_rate").IsNull())

	// A dry run describes the plan and changes nothing.
	r = e.exec("RESTORE DOMAIN prod AS copy FROM '" + one + "' RESUME DRY RUN;")[0]
	require.Equal(t, "dry run: would restore 'prod' as 'copy' (running, generation 1) from '"+one+"', resumed with the archived generations and mappings; nothing changed", r.Message)
	require.Equal(t, "copy", r.Set.Rows[0][1].Text())
	require.Equal(t, "local#", r.Set.Rows[0][9].Text()[:6])
	_, err := e.node.Domain("copy")
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)

	r = e.exec("RESTORE DOMAIN prod AS copy FROM '" + one + "';")[0]
	require.Equal(t, "restored 'prod' as 'copy' (stopped, generation 1) from '"+one+"' at revision 5, stopped; START makes the next generation", r.Message)
	require.Equal(t, "copy", r.Domain)
	e.exec("USE copy; START;")
	d, err := e.node.Domain("copy")
	require.NoError(t, err)
	require.Equal(t, uint64(2), d.Generation)

	// A cluster restore over existing names is refused whole.
	err = e.fail("RESTORE CLUSTER FROM '" + path + "';")
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	var ge *follow.StatementError
	require.True(t, errors.As(err, &ge))
	require.Equal(t, "1:1", ge.Pos.String())
}

func TestBackupStatementRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "p")
	e.exec("CREATE DOMAIN web;")

	require.ErrorIs(t, e.fail("BACKUP DOMAIN TO '"+path+"';"), ErrNoActiveDomain)
	require.ErrorIs(t, e.fail("BACKUP DOMAIN nope TO '"+path+"';"), lifecycle.ErrDomainNotFound)
	require.ErrorIs(t, e.fail("DESCRIBE BACKUP '"+path+"';"), backup.ErrPath)
	require.ErrorIs(t, e.fail("BACKUP CLUSTER TO '"+filepath.Join(dir, "no", "such")+"';"), backup.ErrPath)
	e.exec("BACKUP DOMAIN web TO '" + path + "';")
	require.ErrorIs(t, e.fail("RESTORE DOMAIN prod FROM '"+path+"';"), node.ErrNotInArchive)

	// Inside a transaction every backup statement is refused, like CREATE.
	e.exec("USE web; BEGIN;")
	for _, st := range []string{"BACKUP CLUSTER TO '" + path + "';", "RESTORE DOMAIN web AS w2 FROM '" + path + "';", "DESCRIBE BACKUP '" + path + "';"} {
		err := e.fail(st)
		require.ErrorIs(t, err, ErrInTransaction, st)
		var te *TransactionError
		require.ErrorAs(t, err, &te)
	}
	e.exec("REVERT;")

	// A damaged archive is refused by DESCRIBE BACKUP with the section and
	// check it failed.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[700] ^= 0x20
	require.NoError(t, os.WriteFile(path, b, 0o600))
	err = e.fail("DESCRIBE BACKUP '" + path + "';")
	require.ErrorIs(t, err, backup.ErrCorrupt)
	require.Contains(t, err.Error(), "backup '"+path+"': section ")
}
