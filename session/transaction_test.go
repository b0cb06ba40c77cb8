package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// alter is a step that always preflights, so a transaction can hold any
// number of them, and its canonical length.
const alter = "ALTER DOMAIN SET PLACEMENT NEUTRAL;"

func TestShowTransactions(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN prod; USE prod;")

	r := e.exec("SHOW TRANSACTIONS;")[0]
	require.Equal(t, "SHOW TRANSACTIONS;", r.Statement)
	require.Equal(t, "0 transactions", r.Message)
	require.Equal(t, []string{"domain", "steps", "bytes", "age"}, columnNames(r.Set))
	require.Empty(t, r.Set.Rows)
	require.Equal(t, "[]", string(follow.AppendSetJSON(nil, r.Set)))

	e.exec("BEGIN;")
	e.fake.Advance(1500 * time.Millisecond)
	r = e.exec("SHOW TRANSACTIONS;")[0]
	require.Equal(t, "1 transaction", r.Message)
	require.Equal(t, "prod", r.Domain)
	require.Equal(t, [][]wire.Value{{wire.Text("prod"), wire.Uint(0), wire.Uint(0), wire.Duration(uint64(1500 * time.Millisecond))}}, r.Set.Rows)

	// Steps and bytes count what is queued; age runs from BEGIN, to the
	// millisecond, and a refused step adds nothing.
	e.exec("START AT NOW; STOP;")
	require.Error(t, e.fail("STOP;"))
	e.fake.Advance(time.Second + 999*time.Microsecond)
	r = e.exec("SHOW TRANSACTIONS;")[0]
	want := len("START AT NOW TIME RATE 1;") + len("STOP;")
	require.Equal(t, [][]wire.Value{{wire.Text("prod"), wire.Uint(2), wire.Uint(uint64(want)), wire.Duration(uint64(2500 * time.Millisecond))}}, r.Set.Rows)
	require.JSONEq(t, `[{"domain":"prod","steps":2,"bytes":30,"age":"2.5s"}]`, string(follow.AppendSetJSON(nil, r.Set)))

	// SHOW TRANSACTIONS is not transaction content: it queues nothing.
	d, n, ok := e.sess.InTransaction()
	require.Equal(t, "prod", d)
	require.Equal(t, 2, n)
	require.True(t, ok)

	e.exec("COMMIT;")
	require.Empty(t, e.exec("SHOW TRANSACTIONS;")[0].Set.Rows)
}

// TestTransactionLimits holds each limit just inside, at and just past it:
// the step that would pass a limit is refused with a *TransactionLimitError,
// queues nothing, and leaves the transaction open with the steps before it,
// which COMMIT then applies.
func TestTransactionLimits(t *testing.T) {
	n := len(alter)
	for _, tc := range []struct {
		name     string
		opts     Options
		queued   int    // steps accepted before the refusal
		msg      string // the refusal's message, "" when all fit
		attempts int
	}{
		{"steps just inside", Options{MaxTransactionSteps: 3}, 3, "", 3},
		{"steps at the limit", Options{MaxTransactionSteps: 3}, 3,
			"transaction on domain 'prod' already holds 3 steps, the most one may queue; ALTER DOMAIN SET PLACEMENT NEUTRAL was not queued; COMMIT or REVERT the transaction, then queue the rest in a new one", 4},
		{"one step", Options{MaxTransactionSteps: 1}, 1, "already holds 1 steps", 2},
		{"bytes just inside", Options{MaxTransactionBytes: 3 * n}, 3, "", 3},
		{"bytes at the limit", Options{MaxTransactionBytes: 3 * n}, 3,
			"transaction on domain 'prod' holds 105 bytes of queued statements and ALTER DOMAIN SET PLACEMENT NEUTRAL (35 bytes) would pass the limit of 105; it was not queued; COMMIT or REVERT the transaction, then queue the rest in a new one", 4},
		{"bytes one short", Options{MaxTransactionBytes: 3*n - 1}, 2, "holds 70 bytes of queued statements", 3},
		{"no step fits", Options{MaxTransactionBytes: n - 1}, 0, "holds 0 bytes of queued statements", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, 35, n)
			e := newEnv(t, tc.opts)
			e.exec("CREATE DOMAIN prod; USE prod; BEGIN;")
			for i := 0; i < tc.queued; i++ {
				e.exec(alter)
			}
			if tc.attempts > tc.queued {
				err := e.fail(alter)
				require.ErrorIs(t, err, ErrTransactionFull)
				var le *TransactionLimitError
				require.True(t, errors.As(err, &le))
				require.Equal(t, "prod", le.Domain)
				require.Equal(t, tc.queued, le.Steps)
				require.Equal(t, tc.queued*n, le.Bytes)
				require.Equal(t, n, le.StepBytes)
				require.Contains(t, err.Error(), tc.msg)
				require.True(t, strings.HasPrefix(err.Error(), "1:1: "), err.Error())
				require.Equal(t, "transaction_full", follow.EncodeError(err).Code)
			}
			d, pending, ok := e.sess.InTransaction()
			require.True(t, ok, "the transaction stays open")
			require.Equal(t, "prod", d)
			require.Equal(t, tc.queued, pending)
			want := "committed empty transaction on domain 'prod'"
			if tc.queued > 0 {
				want = "committed transaction on domain 'prod' (" + plural(tc.queued, "step") + ")"
			}
			require.Equal(t, want, e.msg("COMMIT;"))
			// A new transaction starts empty.
			e.exec("BEGIN;")
			if tc.queued > 0 {
				e.exec(alter)
			}
		})
	}
}

// TestTransactionDefaultStepLimit holds the default: a transaction queues
// DefaultMaxTransactionSteps steps and refuses the next one.
func TestTransactionDefaultStepLimit(t *testing.T) {
	require.Equal(t, 1024, DefaultMaxTransactionSteps)
	require.Equal(t, 64<<10, DefaultMaxTransactionBytes)
	require.Less(t, DefaultMaxTransactionSteps*len(alter), DefaultMaxTransactionBytes)
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN prod; USE prod; BEGIN;")
	_, err := e.sess.ExecText(e.ctx, strings.Repeat(alter, DefaultMaxTransactionSteps))
	require.NoError(t, err)
	err = e.fail(alter)
	require.ErrorIs(t, err, ErrTransactionFull)
	require.Contains(t, err.Error(), "already holds 1024 steps")
	_, pending, ok := e.sess.InTransaction()
	require.True(t, ok)
	require.Equal(t, DefaultMaxTransactionSteps, pending)
}

// TestTransactionIdleExpiry holds the idle timeout: a transaction whose
// session runs no statement for longer than it is reverted by the next
// statement, which reports it and does not run; a statement within the
// timeout, of any kind, keeps the transaction open.
func TestTransactionIdleExpiry(t *testing.T) {
	e := newEnv(t, Options{TransactionIdleTimeout: time.Minute})
	e.exec("CREATE DOMAIN prod; USE prod; START AT NOW; BEGIN; STOP;")

	// Exactly the timeout is still within it; any statement counts.
	e.fake.Advance(time.Minute)
	e.exec("LIST DOMAINS;")
	e.fake.Advance(time.Minute)
	require.Equal(t, "1 transaction", e.msg("SHOW TRANSACTIONS;"))

	// Past it, the next statement, here COMMIT, is refused and applies
	// nothing: the domain still runs.
	e.fake.Advance(time.Minute + time.Nanosecond)
	err := e.fail("COMMIT;")
	require.ErrorIs(t, err, ErrTransactionExpired)
	var xe *TransactionExpiredError
	require.True(t, errors.As(err, &xe))
	require.Equal(t, TransactionExpiredError{Domain: "prod", Steps: 1, Timeout: time.Minute}, *xe)
	require.Equal(t, "1:1: the transaction on domain 'prod' had no statement for longer than 1m and was reverted (1 step discarded); this statement did not run: BEGIN a new transaction and queue the steps again", err.Error())
	require.Equal(t, "transaction_expired", follow.EncodeError(err).Code)
	_, _, ok := e.sess.InTransaction()
	require.False(t, ok)
	d, err := e.node.Domain("prod")
	require.NoError(t, err)
	require.Equal(t, "running", d.Status.String())

	// The session goes on without a transaction; a statement that would
	// have been queued now runs at once.
	require.ErrorIs(t, e.fail("COMMIT;"), ErrNotInTransaction)
	e.fake.Advance(time.Hour)
	require.Equal(t, "stopped domain 'prod'", e.msg("STOP;"))
}

func TestTransactionIdleExpiryDefaultAndNever(t *testing.T) {
	require.Equal(t, 10*time.Minute, DefaultTransactionIdleTimeout)
	e := newEnv(t, Options{})
	e.exec("CREATE DOMAIN prod; USE prod; BEGIN;")
	e.fake.Advance(DefaultTransactionIdleTimeout)
	e.exec("SHOW TRANSACTIONS;")
	e.fake.Advance(DefaultTransactionIdleTimeout + time.Nanosecond)
	require.ErrorIs(t, e.fail("SHOW TRANSACTIONS;"), ErrTransactionExpired)

	never := newEnv(t, Options{TransactionIdleTimeout: -1})
	never.exec("CREATE DOMAIN prod; USE prod; BEGIN;")
	never.fake.Advance(1000 * time.Hour)
	require.Equal(t, "committed empty transaction on domain 'prod'", never.msg("COMMIT;"))
}

// TestDescribeTransaction: the open transaction's queued steps in order,
// with their canonical text and length, and its domain, size, limits, age
// and idle bound in the message; refused with the reference system's words
// when no transaction is open.
func TestDescribeTransaction(t *testing.T) {
	e := newEnv(t, Options{MaxTransactionSteps: 8, MaxTransactionBytes: 4096, TransactionIdleTimeout: time.Minute})
	err := e.fail("DESCRIBE TRANSACTION;")
	require.ErrorIs(t, err, ErrNotInTransaction)
	require.ErrorContains(t, err, "DESCRIBE TRANSACTION requires an active transaction")
	e.exec("CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; BEGIN; START AT '2026-01-01T00:00:00Z'; ALTER DOMAIN SET PLACEMENT PREFER COLOCATION; STOP;")
	e.fake.Advance(1500 * time.Millisecond)
	rs := e.exec("DESCRIBE TRANSACTION;")
	require.Len(t, rs, 1)
	r := rs[0]
	require.Equal(t, "prod", r.Domain)
	steps := []string{"START AT '2026-01-01T00:00:00Z' TIME RATE 1;", "ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;", "STOP;"}
	bytes := 0
	require.Len(t, r.Set.Rows, len(steps))
	for i, row := range r.Set.Rows {
		require.Equal(t, uint64(i+1), row[r.Set.Column("step")].Uint())
		require.Equal(t, steps[i], row[r.Set.Column("statement")].Text())
		require.Equal(t, uint64(len(steps[i])), row[r.Set.Column("bytes")].Uint())
		bytes += len(steps[i])
	}
	require.Equal(t, fmt.Sprintf("transaction on domain 'prod': 3 steps of at most 8, %d of at most 4096 bytes, open for 1.5s; reverted after 1m without a statement", bytes), r.Message)
	e.exec("REVERT;")
	require.ErrorIs(t, e.fail("DESCRIBE TRANSACTION;"), ErrNotInTransaction)
}

// SHOW ALL TRANSACTIONS widens SHOW TRANSACTIONS to every session of the
// node's directory, with each session's number and the identity it
// serves, its own included, and to the transactions held for clients that
// lost their session; a closed session leaves the list.
func TestShowAllTransactions(t *testing.T) {
	dir := NewDirectory()
	e := newEnv(t, Options{Directory: dir, Identity: "alice"})
	e.exec("CREATE DOMAIN prod; CREATE DOMAIN test; USE prod;")
	other := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake, Directory: dir, Identity: "bob"})
	idle := New(e.node, Options{Logger: quietLogger(), TimeSource: e.fake, Directory: dir})
	defer idle.Close()

	r := e.exec("SHOW ALL TRANSACTIONS;")[0]
	require.Equal(t, "SHOW ALL TRANSACTIONS;", r.Statement)
	require.Equal(t, []string{"session", "identity", "state", "domain", "steps", "bytes", "age"}, columnNames(r.Set))
	require.Empty(t, r.Set.Rows, "no session has a transaction open")
	require.Equal(t, "0 transactions on this node", r.Message)

	_, err := other.ExecText(e.ctx, "USE test; BEGIN; ALTER DOMAIN SET PLACEMENT NEUTRAL;")
	require.NoError(t, err)
	e.fake.Advance(2 * time.Second)
	e.exec("BEGIN;")
	r = e.exec("SHOW ALL TRANSACTIONS;")[0]
	require.Equal(t, "1 transaction", e.msg("SHOW TRANSACTIONS;"), "SHOW TRANSACTIONS stays the session's own")
	require.Equal(t, [][]wire.Value{
		{wire.Uint(1), wire.Text("alice"), wire.Text("open"), wire.Text("prod"), wire.Uint(0), wire.Uint(0), wire.Duration(0)},
		{wire.Uint(2), wire.Text("bob"), wire.Text("open"), wire.Text("test"), wire.Uint(1), wire.Uint(uint64(len(alter))), wire.Duration(uint64(2 * time.Second))},
	}, r.Set.Rows)
	require.Equal(t, "2 transactions on this node", r.Message)

	// A transaction held for a client that lost its session is listed as
	// held, after the open ones, with the identity it is held for.
	held, ok := other.HoldTransaction()
	require.True(t, ok)
	dir.SetHeld(func() []HeldEntry { return []HeldEntry{{Identity: "bob", Transaction: held}} })
	require.NoError(t, other.Close())
	r = e.exec("SHOW ALL TRANSACTIONS;")[0]
	require.Equal(t, [][]wire.Value{
		{wire.Uint(1), wire.Text("alice"), wire.Text("open"), wire.Text("prod"), wire.Uint(0), wire.Uint(0), wire.Duration(0)},
		{wire.Null(), wire.Text("bob"), wire.Text("held"), wire.Text("test"), wire.Uint(1), wire.Uint(uint64(len(alter))), wire.Duration(uint64(2 * time.Second))},
	}, r.Set.Rows)
	require.Equal(t, "2 transactions on this node (1 open, 1 held for a reconnecting client)", r.Message)

	dir.SetHeld(nil)
	e.exec("COMMIT;")
	require.Empty(t, e.exec("SHOW ALL TRANSACTIONS;")[0].Set.Rows, "committed, and the closed session left the list")

	// SHOW ALL TRANSACTIONS is not transaction content either, and a
	// session without a directory shows its own alone, saying so.
	e.exec("BEGIN;")
	require.Equal(t, "1 transaction on this node", e.msg("SHOW ALL TRANSACTIONS;"))
	_, n, _ := e.sess.InTransaction()
	require.Zero(t, n)
	alone := newEnv(t, Options{})
	alone.exec("CREATE DOMAIN solo; USE solo; BEGIN;")
	r = alone.exec("SHOW ALL TRANSACTIONS;")[0]
	require.Equal(t, [][]wire.Value{{wire.Null(), wire.Null(), wire.Text("open"), wire.Text("solo"), wire.Uint(0), wire.Uint(0), wire.Duration(0)}}, r.Set.Rows)
	require.Contains(t, r.Message, "this session's: the node keeps no list of its sessions")
}
