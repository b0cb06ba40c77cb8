package session

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

func TestStatementMessages(t *testing.T) {
	e := newEnv(t, Options{})
	for _, tc := range []struct{ text, want string }{
		{"CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;", "created domain 'prod'"},
		{"CREATE IF NOT EXISTS PACED DOMAIN prod WITH PERIOD 1s SKEW 0s;", "domain 'prod' already exists; nothing created"},
		{"CREATE DOMAIN web;", "created domain 'web'"},
		{"USE prod;", "using domain 'prod'"},
		{"ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;", "set placement of domain 'prod' to PREFER COLOCATION"},
		{"ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;", "placement of domain 'prod' is already PREFER COLOCATION"},
		{"START AT '2026-01-01T00:00:00Z' TIME RATE 60;", "started domain 'prod'"},
		{"STOP;", "stopped domain 'prod'"},
		{"DROP DOMAIN web;", "dropped domain 'web'"},
		{"DROP DOMAIN IF EXISTS web;", "domain 'web' does not exist; nothing dropped"},
		{"LIST DOMAINS;", "1 domain"},
		{"DESCRIBE DOMAIN;", "domain 'prod'"},
		{"BEGIN;", "began transaction on domain 'prod'"},
		{"START AT NOW;", "queued START AT NOW TIME RATE 1 (1 pending)"},
		{"ROLLBACK;", "reverted transaction on domain 'prod' (1 step discarded)"},
		{"BEGIN; COMMIT;", "committed empty transaction on domain 'prod'"},
	} {
		require.Equal(t, tc.want, e.msg(tc.text), tc.text)
	}
}

// TestListAndDescribe lists the domains and describes a paced one started
// at an origin other than the sampled anchor, so that DESCRIBE's start and
// mapping columns each show their own value: the logical origin, the UTC
// anchor (the node's now) and the rate.
func TestListAndDescribe(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms; CREATE DOMAIN web; USE prod;" +
		"START AT '2025-06-01T12:00:00Z' TIME RATE 60;")
	set := e.exec("LIST DOMAINS;")[0].Set
	require.Equal(t, []string{"name", "pace", "status", "generation"}, columnNames(set))
	require.Equal(t, [][]wire.Value{
		{wire.Text("prod"), wire.Text("PACED"), wire.Text("running"), wire.Uint(1)},
		{wire.Text("web"), wire.Text("UNPACED"), wire.Text("stopped"), wire.Uint(0)},
	}, set.Rows)
	require.JSONEq(t, `[{"name":"prod","pace":"PACED","status":"running","generation":1},
		{"name":"web","pace":"UNPACED","status":"stopped","generation":0}]`, string(follow.AppendSetJSON(nil, set)))

	set = e.exec("DESCRIBE DOMAIN;")[0].Set
	require.Len(t, set.Rows, 1)
	row := map[string]string{}
	for i, c := range set.Columns {
		row[c.Name] = set.Rows[0][i].String()
		if !set.Rows[0][i].IsNull() {
			require.Equal(t, c.Type, set.Rows[0][i].Kind(), c.Name)
		}
	}
	require.Equal(t, map[string]string{
		"name": "prod", "pace": "PACED", "period": "1s", "skew": "100ms", "placement": "NEUTRAL",
		"status": "running", "generation": "1", "start_mode": "at", "start_point": "2025-06-01T12:00:00Z",
		"start_wall": "2026-01-01T00:00:00Z", "start_rate": "60",
		"mapping_logical_start": "2025-06-01T12:00:00Z", "mapping_wall_started_at": "2026-01-01T00:00:00Z",
		"mapping_time_rate": "60", "authority": row["authority"], "revision": row["revision"], "clock_failure": "NULL",
	}, row)
	require.Regexp(t, `^local#\d+@1$`, row["authority"])

	// An unpaced domain never started has no period, start or mapping.
	set = e.exec("DESCRIBE DOMAIN web;")[0].Set
	for _, name := range []string{"period", "skew", "start_mode", "start_point", "mapping_time_rate", "authority"} {
		require.True(t, set.Rows[0][set.Column(name)].IsNull(), name)
	}
}

func columnNames(s *wire.ResultSet) []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name
	}
	return out
}

func TestTransactions(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	require.Equal(t, "began transaction on domain 'prod'", e.msg("BEGIN;"))
	dom, pending, ok := e.sess.InTransaction()
	require.Equal(t, "prod", dom)
	require.Zero(t, pending)
	require.True(t, ok)
	require.Equal(t, "queued START AT NOW TIME RATE 2 (1 pending)", e.msg("START AT NOW TIME RATE 2;"))
	require.Equal(t, "queued STOP (2 pending)", e.msg("STOP;"))
	require.Equal(t, "queued ALTER DOMAIN SET PLACEMENT SUGGEST SEPARATION (3 pending)",
		e.msg("ALTER DOMAIN SET PLACEMENT SUGGEST SEPARATION;"))
	require.Equal(t, "queued START AT '2026-01-01T00:00:00Z' TIME RATE 60 (4 pending)",
		e.msg("START AT '2026-01-01T00:00:00Z' TIME RATE 60;"))
	// Nothing is applied before COMMIT.
	d, err := e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Stopped, d.Status)
	rev := d.Revision

	require.Equal(t, "committed transaction on domain 'prod' (4 steps)", e.msg("COMMIT;"))
	_, _, ok = e.sess.InTransaction()
	require.False(t, ok)
	d, err = e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Running, d.Status)
	require.Equal(t, uint64(2), d.Generation, "two STARTs in one transaction")
	require.Equal(t, lifecycle.SuggestSeparation, d.Placement)
	require.Equal(t, rev+1, d.Revision, "the whole transaction is one catalog revision")

	// REVERT drops queued steps without applying them.
	e.exec("BEGIN; STOP;")
	require.Equal(t, "reverted transaction on domain 'prod' (1 step discarded)", e.msg("REVERT;"))
	d, err = e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, lifecycle.Running, d.Status)

	// A refused COMMIT applies nothing and ends the transaction: COMMIT
	// validates against the committed state, which another session changed
	// after the steps were queued.
	other := New(e.node, Options{Logger: quietLogger()})
	defer func() { require.NoError(t, other.Close()) }()
	e.exec("BEGIN; STOP; ALTER DOMAIN SET PLACEMENT NEUTRAL;")
	_, err = other.ExecText(e.ctx, "USE prod; STOP;")
	require.NoError(t, err)
	d, err = e.node.Domain("prod")
	require.NoError(t, err)
	err = e.fail("COMMIT;")
	require.ErrorIs(t, err, lifecycle.ErrAlreadyStopped)
	require.EqualError(t, err, "1:1: transaction step 1 (stop): domain 'prod' is already stopped; START it to establish a new generation")
	_, _, ok = e.sess.InTransaction()
	require.False(t, ok)
	after, err := e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, d, after, "a refused COMMIT applies nothing")

	// LIST DOMAINS is allowed inside a transaction.
	e.exec("BEGIN; LIST DOMAINS; REVERT;")
}

// TestTransactionPreflight queues steps that cannot follow the steps before
// them: each is refused at once with the error COMMIT would give for it
// (the same sentinel, code, step number and message), the transaction stays
// open with the earlier steps, and COMMIT then applies those.
func TestTransactionPreflight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    string // run before BEGIN on the active domain prod
		prefix   string // queued after BEGIN, all accepted
		refused  string // the step refused at once
		want     string // its error
		is       error
		step     int // the step the error names; 0 for a refusal that is no step's
		after    lifecycle.Status
		gen      uint64
		placed   lifecycle.Placement
		commitOK string
	}{
		{
			name: "second START of a stopped domain", prefix: "START;", refused: "START;",
			want: "1:1: transaction step 2 (start): domain 'prod' is already running; STOP it before starting a new generation",
			is:   lifecycle.ErrAlreadyRunning, step: 2, after: lifecycle.Running, gen: 1,
			commitOK: "committed transaction on domain 'prod' (1 step)",
		},
		{
			name: "START after START AT and a placement", prefix: "START AT '2030-01-01T00:00:00Z' TIME RATE 4; ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;",
			refused: "START AT NOW;",
			want:    "1:1: transaction step 3 (start): domain 'prod' is already running; STOP it before starting a new generation",
			is:      lifecycle.ErrAlreadyRunning, step: 3, after: lifecycle.Running, gen: 1, placed: lifecycle.PreferColocation,
			commitOK: "committed transaction on domain 'prod' (2 steps)",
		},
		{
			name: "second STOP of a running domain", setup: "START;", prefix: "STOP;", refused: "STOP;",
			want: "1:1: transaction step 2 (stop): domain 'prod' is already stopped; START it to establish a new generation",
			is:   lifecycle.ErrAlreadyStopped, step: 2, after: lifecycle.Stopped, gen: 1,
			commitOK: "committed transaction on domain 'prod' (1 step)",
		},
		{
			name: "STOP after STOP; START; STOP", setup: "START;", prefix: "STOP; START; STOP;", refused: "STOP;",
			want: "1:1: transaction step 4 (stop): domain 'prod' is already stopped; START it to establish a new generation",
			is:   lifecycle.ErrAlreadyStopped, step: 4, after: lifecycle.Stopped, gen: 2,
			commitOK: "committed transaction on domain 'prod' (3 steps)",
		},
		{
			name: "first STOP of a stopped domain", refused: "STOP;",
			want: "1:1: transaction step 1 (stop): domain 'prod' is already stopped; START it to establish a new generation",
			is:   lifecycle.ErrAlreadyStopped, step: 1, after: lifecycle.Stopped,
			commitOK: "committed empty transaction on domain 'prod'",
		},
		{
			// DROP DOMAIN is no transaction content: it is refused at once
			// whatever the prefix leaves, and the prefix stays queued.
			name: "DROP of a domain the prefix leaves running", prefix: "START;", refused: "DROP DOMAIN prod;",
			want: "1:1: DROP DOMAIN cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first",
			is:   ErrInTransaction, after: lifecycle.Running, gen: 1,
			commitOK: "committed transaction on domain 'prod' (1 step)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
			if tc.setup != "" {
				e.exec(tc.setup)
			}
			before, err := e.node.Domain("prod")
			require.NoError(t, err)
			e.exec("BEGIN;")
			queued := 0
			if tc.prefix != "" {
				queued = len(e.exec(tc.prefix))
			}

			err = e.fail(tc.refused)
			require.EqualError(t, err, tc.want)
			require.ErrorIs(t, err, tc.is)
			if tc.step > 0 {
				le := lifecycle.AsError(err)
				require.NotNil(t, le)
				require.Equal(t, tc.step, le.Step)
			}
			dom, pending, ok := e.sess.InTransaction()
			require.True(t, ok, "the transaction stays open")
			require.Equal(t, "prod", dom)
			require.Equal(t, queued, pending, "the earlier steps stay queued, the refused one is not")
			d, err := e.node.Domain("prod")
			require.NoError(t, err)
			require.Equal(t, before, d, "nothing is applied before COMMIT")

			require.Equal(t, tc.commitOK, e.msg("COMMIT;"))
			_, _, ok = e.sess.InTransaction()
			require.False(t, ok)
			d, err = e.node.Domain("prod")
			require.NoError(t, err)
			require.Equal(t, tc.after, d.Status)
			require.Equal(t, tc.gen, d.Generation)
			require.Equal(t, tc.placed, d.Placement)
		})
	}
}

// TestTransactionPreflightFollowsCommittedState: the preflight applies the
// queued steps to the state committed when a step is queued, so a change
// another session commits meanwhile counts. When that change leaves an
// earlier step unable to apply, the new step is refused with that step's
// error, the one COMMIT would give, and the transaction stays open for a
// REVERT.
func TestTransactionPreflightFollowsCommittedState(t *testing.T) {
	e := newEnv(t, Options{})
	other := New(e.node, Options{Logger: quietLogger()})
	defer func() { require.NoError(t, other.Close()) }()
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; BEGIN; START;")

	_, err := other.ExecText(e.ctx, "USE prod; START;")
	require.NoError(t, err)
	err = e.fail("ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;")
	require.ErrorIs(t, err, lifecycle.ErrAlreadyRunning)
	require.EqualError(t, err, "1:1: transaction step 1 (start): domain 'prod' is already running; STOP it before starting a new generation")
	_, pending, ok := e.sess.InTransaction()
	require.True(t, ok)
	require.Equal(t, 1, pending)
	require.Equal(t, "reverted transaction on domain 'prod' (1 step discarded)", e.msg("REVERT;"))

	// A STOP queued on the running domain, then the domain dropped by the
	// other session: every further step is refused as COMMIT would refuse.
	e.exec("BEGIN; STOP;")
	_, err = other.ExecText(e.ctx, "STOP; DROP DOMAIN prod;")
	require.NoError(t, err)
	err = e.fail("START;")
	require.ErrorIs(t, err, lifecycle.ErrDomainNotFound)
	_, pending, ok = e.sess.InTransaction()
	require.True(t, ok)
	require.Equal(t, 1, pending)
	commitErr := e.fail("COMMIT;")
	require.ErrorIs(t, commitErr, lifecycle.ErrDomainNotFound)
	require.Equal(t, commitErr.Error(), err.Error(), "the refusal is the error COMMIT gives")
}

func TestRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	none := []struct{ text, want string }{
		{"START;", "1:1: no active domain; USE <name> first"},
		{"STOP;", "1:1: no active domain; USE <name> first"},
		{"ALTER DOMAIN SET PLACEMENT NEUTRAL;", "1:1: no active domain; USE <name> first"},
		{"ATTACH DOMAIN CLOCK;", "1:1: no active domain; USE <name> first"},
		{"DETACH DOMAIN CLOCK;", "1:1: no active domain; USE <name> first"},
		{"DESCRIBE DOMAIN;", "1:1: no active domain; USE <name> first"},
		{"BEGIN;", "1:1: no active domain; USE <name> first"},
		{"COMMIT;", "1:1: COMMIT requires an active transaction, and none is open on this session; BEGIN one first"},
		{"REVERT;", "1:1: REVERT requires an active transaction, and none is open on this session; BEGIN one first"},
		{"USE nope;", "1:1: domain 'nope' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN nope first"},
		{"DESCRIBE DOMAIN nope;", "1:1: domain 'nope' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN nope first"},
	}
	for _, tc := range none {
		require.EqualError(t, e.fail(tc.text), tc.want, tc.text)
	}
	require.ErrorIs(t, e.fail("START;"), ErrNoActiveDomain)

	e.exec("CREATE DOMAIN prod;\nUSE prod;")
	for _, tc := range []struct{ text, want string }{
		{"DETACH DOMAIN CLOCK;", "1:1: session does not follow the clock of domain 'prod'; ATTACH DOMAIN CLOCK first"},
		{"CREATE DOMAIN prod;", "1:1: domain 'prod' already exists; use CREATE DOMAIN IF NOT EXISTS or choose another name"},
		{"STOP;", "1:1: domain 'prod' is already stopped; START it to establish a new generation"},
	} {
		require.EqualError(t, e.fail(tc.text), tc.want, tc.text)
	}
	e.exec("ATTACH DOMAIN CLOCK;")
	err := e.fail("ATTACH DOMAIN CLOCK;")
	require.EqualError(t, err, "1:1: session already follows the clock of domain 'prod'; DETACH DOMAIN CLOCK first")
	require.ErrorIs(t, err, ErrAlreadyAttached)
	var ae *AttachmentError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "prod", ae.Domain)

	e.exec("BEGIN;")
	for _, tc := range []struct{ text, want string }{
		{"CREATE DOMAIN other;", "1:1: CREATE DOMAIN cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"DROP DOMAIN prod;", "1:1: DROP DOMAIN cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"USE prod;", "1:1: USE cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"DESCRIBE DOMAIN;", "1:1: DESCRIBE DOMAIN cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"ATTACH DOMAIN CLOCK;", "1:1: ATTACH DOMAIN CLOCK cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"DETACH DOMAIN CLOCK;", "1:1: DETACH DOMAIN CLOCK cannot be queued in a transaction (open on domain 'prod'); COMMIT or REVERT first"},
		{"BEGIN;", "1:1: transaction is already active: a transaction on domain 'prod' is open; COMMIT or REVERT it before BEGIN"},
	} {
		err := e.fail(tc.text)
		require.EqualError(t, err, tc.want, tc.text)
		var te *TransactionError
		require.ErrorAs(t, err, &te)
		require.Equal(t, "prod", te.Domain)
	}
	require.ErrorIs(t, e.fail("BEGIN;"), ErrNestedTransaction)
	require.ErrorIs(t, e.fail("USE prod;"), ErrInTransaction)
	e.exec("REVERT; DETACH DOMAIN CLOCK; DROP DOMAIN IF EXISTS zzz;")

	// BEGIN needs the active domain to still exist: dropped by another
	// session, it is refused as missing.
	other := New(e.node, Options{Logger: quietLogger()})
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	_, err = other.ExecText(e.ctx, "DROP DOMAIN prod;")
	require.NoError(t, err)
	require.Equal(t, "prod", e.sess.ActiveDomain())
	require.ErrorIs(t, e.fail("BEGIN;"), lifecycle.ErrDomainNotFound)
}

func TestDropDomainEndsItsActivity(t *testing.T) {
	tests := []struct {
		name       string
		drop       string
		wantActive string
	}{
		{"the active domain", "DROP DOMAIN prod;", ""},
		{"the active domain if it exists", "DROP DOMAIN IF EXISTS prod;", ""},
		{"another domain", "DROP DOMAIN other;", "prod"},
		{"a missing domain", "DROP DOMAIN IF EXISTS nope;", "prod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.exec("CREATE DOMAIN prod; CREATE DOMAIN other; USE prod;")
			e.exec(tt.drop)
			require.Equal(t, tt.wantActive, e.sess.ActiveDomain())
			if tt.wantActive == "" {
				require.ErrorIs(t, e.fail("STOP;"), ErrNoActiveDomain)
			}
		})
	}
}

func TestExecTextPositions(t *testing.T) {
	e := newEnv(t, Options{})
	rs, err := e.sess.ExecText(ctxT(t), "CREATE DOMAIN a;\nCREATE DOMAIN b;\n  CREATE DOMAIN a;\nCREATE DOMAIN c;")
	require.Len(t, rs, 2)
	var ge *follow.StatementError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, 3, ge.Pos.Line)
	require.Equal(t, 3, ge.Pos.Column)
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	_, err = e.node.Domain("c")
	require.Error(t, err, "nothing runs after the failure")

	// A syntax error stops the text after running what precedes it.
	rs, err = e.sess.ExecText(ctxT(t), "CREATE DOMAIN d; CREATE PACED DOMAIN e WITH SKEW 1s;")
	require.Len(t, rs, 1)
	require.ErrorIs(t, err, grammar.ErrSyntax)
	require.ErrorAs(t, err, &ge)
	require.Equal(t, 1, ge.Pos.Line)
	require.Greater(t, ge.Pos.Column, 17)
	require.True(t, errors.As(err, &ge))
}

func TestClosedSession(t *testing.T) {
	e := newEnv(t, Options{})
	require.NoError(t, e.sess.Close())
	require.ErrorIs(t, e.fail("LIST DOMAINS;"), ErrClosed)
	_, err := e.sess.NextFrame(ctxT(t))
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, e.sess.Close())
}

// TestListDomainsLike lists only the domains whose name matches the
// pattern, in name order, and says so in the message; a pattern that
// matches nothing gives an empty table.
func TestListDomainsLike(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN `web-1`; CREATE DOMAIN `web-2`; CREATE DOMAIN webx; CREATE DOMAIN `api_web-1`; CREATE DOMAIN web_3;")
	for _, tc := range []struct {
		text string
		want []string
		msg  string
	}{
		{"LIST DOMAINS LIKE 'web-%';", []string{"web-1", "web-2"}, "2 domains like 'web-%'"},
		{"LIST DOMAINS LIKE 'WEB%';", []string{"web-1", "web-2", "web_3", "webx"}, "4 domains like 'web%'"},
		{"LIST DOMAINS LIKE '%web-_';", []string{"api_web-1", "web-1", "web-2"}, "3 domains like '%web-_'"},
		{`LIST DOMAINS LIKE 'web\_%';`, []string{"web_3"}, `1 domain like 'web\_%'`},
		{"LIST DOMAINS LIKE 'db-%';", nil, "0 domains like 'db-%'"},
		{"LIST DOMAINS;", []string{"api_web-1", "web-1", "web-2", "web_3", "webx"}, "5 domains"},
	} {
		res := e.exec(tc.text)[0]
		var names []string
		for _, row := range res.Set.Rows {
			names = append(names, row[0].String())
		}
		require.Equal(t, tc.want, names, tc.text)
		require.Equal(t, tc.msg, res.Message, tc.text)
	}
}
