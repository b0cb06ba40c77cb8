package history

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func w(client int, k Kind, out Outcome, call, ret int64) Op {
	return Op{Client: client, Input: Input{Kind: k, Domain: "d", Placement: "PREFER COLOCATION"}, Output: Output{Outcome: out}, Call: call, Return: ret}
}

func alter(client int, placement string, call, ret int64) Op {
	op := w(client, Alter, OK, call, ret)
	op.Input.Placement = placement
	return op
}

func list(client int, lvl Level, saw Domain, call, ret int64) Op {
	op := read(client, lvl, saw, 0, call, ret)
	op.Input.Kind = List
	return op
}

func fail(client int, k Kind, why Refusal, call, ret int64) Op {
	op := w(client, k, Failed, call, ret)
	op.Output.Refusal = why
	return op
}

// txn is a transaction of steps with outcome out; a Failed one names
// refusal why at one-based step at.
func txn(client int, out Outcome, why Refusal, at int, call, ret int64, steps ...Step) Op {
	op := w(client, Txn, out, call, ret)
	op.Input.Placement = ""
	op.Input.Steps = steps
	op.Output.Refusal, op.Output.Step = why, at
	return op
}

var (
	stStart = Step{Kind: Start}
	stStop  = Step{Kind: Stop}
	stColoc = Step{Kind: Alter, Placement: "PREFER COLOCATION"}
	stNeut  = Step{Kind: Alter, Placement: "NEUTRAL"}
)

func read(client int, lvl Level, saw Domain, rev uint64, call, ret int64) Op {
	return Op{Client: client, Input: Input{Kind: Read, Domain: "d", Level: lvl}, Output: Output{Outcome: OK, Saw: saw, Revision: rev}, Call: call, Return: ret}
}

var (
	stopped0 = Domain{Exists: true, Placement: "NEUTRAL"}
	running1 = Domain{Exists: true, Running: true, Gen: 1, Placement: "NEUTRAL"}
	stopped1 = Domain{Exists: true, Gen: 1, Placement: "NEUTRAL"}
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name         string
		ops          []Op
		linearizable bool
		local        int
	}{
		{"sequential create start read", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), read(1, Linearizable, running1, 2, 4, 5)}, true, 0},
		{"a read after a completed write misses it", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), read(1, Linearizable, stopped0, 1, 4, 5)}, false, 0},
		{"a read concurrent with the write may miss it", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 5), read(1, Linearizable, stopped0, 1, 3, 4)}, true, 0},
		{"a refusal the state does not give", []Op{w(0, Create, OK, 0, 1), fail(1, Start, RefusedAlreadyRunning, 2, 3)}, false, 0},
		{"the refusals the state gives", []Op{w(0, Create, OK, 0, 1), fail(1, Create, RefusedExists, 2, 3), fail(1, Stop, RefusedAlreadyStopped, 4, 5)}, true, 0},
		{"a stop refused for the wrong reason", []Op{w(0, Create, OK, 0, 1), fail(1, Stop, RefusedAlreadyRunning, 2, 3)}, false, 0},
		{"a drop refused as absent while the domain exists", []Op{w(0, Create, OK, 0, 1), fail(1, Drop, RefusedNotFound, 2, 3)}, false, 0},
		{"a start refused as absent before the create", []Op{fail(1, Start, RefusedNotFound, 0, 1), w(0, Create, OK, 2, 3)}, true, 0},
		{"drop of a stopped domain then create", []Op{w(0, Create, OK, 0, 1), w(0, Drop, OK, 2, 3), w(0, Create, OK, 4, 5), read(0, Linearizable, stopped0, 3, 6, 7)}, true, 0},
		{"drop of a running domain is refused", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), fail(0, Drop, RefusedRunning, 4, 5)}, true, 0},
		{"alter sets the placement", []Op{w(0, Create, OK, 0, 1), w(0, Alter, OK, 2, 3), read(1, Linearizable, Domain{Exists: true, Placement: "PREFER COLOCATION"}, 2, 4, 5)}, true, 0},
		{"an unknown write that took effect", []Op{w(0, Create, OK, 0, 1), w(0, Start, Unknown, 2, 3), read(1, Linearizable, running1, 2, 10, 11)}, true, 0},
		{"an unknown write that never did", []Op{w(0, Create, OK, 0, 1), w(0, Start, Unknown, 2, 3), read(1, Linearizable, stopped0, 1, 10, 11)}, true, 0},
		{"an unknown write seen then unseen", []Op{w(0, Create, OK, 0, 1), w(0, Start, Unknown, 2, 3), read(1, Linearizable, running1, 2, 10, 11), read(1, Linearizable, stopped0, 1, 12, 13)}, false, 1},
		{"a list sees status and generation", []Op{w(0, Create, OK, 0, 1), w(0, Alter, OK, 2, 3), list(1, Linearizable, stopped0, 4, 5)}, true, 0},
		{"a list after a completed start misses it", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), list(1, Linearizable, stopped0, 4, 5)}, false, 0},
		{"a list of an absent domain after its create", []Op{w(0, Create, OK, 0, 1), list(1, Linearizable, Domain{}, 4, 5)}, false, 0},
		{"a list of the previous generation", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), w(0, Stop, OK, 4, 5), w(0, Start, OK, 6, 7), list(1, Linearizable, running1, 8, 9)}, false, 0},
		{"a stale local list is allowed", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), list(1, Local, stopped0, 4, 5)}, true, 0},
		{"a stale local read is allowed", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), read(1, Local, stopped0, 1, 4, 5)}, true, 0},
		{"local reads that go back", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), read(1, Local, running1, 2, 4, 5), read(1, Local, stopped0, 1, 6, 7)}, true, 1},
		{"local reads that repeat a revision", []Op{w(0, Create, OK, 0, 1), read(1, Local, stopped0, 1, 4, 5), read(1, Local, stopped0, 1, 6, 7)}, true, 0},
		{"a local read missing its client's write", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), w(0, Start, OK, 4, 5), read(0, Local, stopped0, 1, 6, 7)}, true, 1},
		{"a local read with its client's write", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), w(0, Start, OK, 4, 5), read(0, Local, running1, 2, 6, 7)}, true, 0},
		{"an alter that changes nothing commits nothing", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), alter(0, "NEUTRAL", 4, 5), read(0, Local, stopped0, 1, 6, 7)}, true, 0},
		{"an alter that changes the placement must show", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), alter(0, "PREFER COLOCATION", 4, 5), read(0, Local, stopped0, 1, 6, 7)}, true, 1},
		{"another client's write need not show", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), w(1, Start, OK, 4, 5), read(0, Local, stopped0, 1, 6, 7)}, true, 0},
		{"a transaction applies every step", []Op{w(0, Create, OK, 0, 1), txn(0, OK, "", 0, 2, 3, stStart, stColoc), read(1, Linearizable, Domain{Exists: true, Running: true, Gen: 1, Placement: "PREFER COLOCATION"}, 2, 4, 5)}, true, 0},
		{"a transaction seen half-applied", []Op{w(0, Create, OK, 0, 1), txn(0, OK, "", 0, 2, 3, stStart, stColoc), read(1, Linearizable, running1, 2, 4, 5)}, false, 0},
		{"a read concurrent with a transaction sees all or none", []Op{w(0, Create, OK, 0, 1), txn(0, OK, "", 0, 2, 7, stStart, stColoc), read(1, Linearizable, stopped0, 1, 3, 4), read(1, Linearizable, running1, 2, 5, 6)}, false, 0},
		{"a refused transaction applies nothing", []Op{w(0, Create, OK, 0, 1), txn(0, Failed, RefusedAlreadyRunning, 2, 2, 3, stStart, stStart), read(1, Linearizable, stopped0, 1, 4, 5)}, true, 0},
		{"a refused transaction seen half-applied", []Op{w(0, Create, OK, 0, 1), txn(0, Failed, RefusedAlreadyRunning, 2, 2, 3, stStart, stStart), read(1, Linearizable, running1, 2, 4, 5)}, false, 0},
		{"a transaction refused at the wrong step", []Op{w(0, Create, OK, 0, 1), txn(0, Failed, RefusedAlreadyStopped, 2, 2, 3, stStart, stStop, stStop)}, false, 0},
		{"a transaction refused at its step", []Op{w(0, Create, OK, 0, 1), txn(0, Failed, RefusedAlreadyStopped, 3, 2, 3, stStart, stStop, stStop)}, true, 0},
		{"a transaction on an absent domain", []Op{txn(0, Failed, RefusedNotFound, 0, 0, 1, stStart)}, true, 0},
		{"a transaction acknowledged on an absent domain", []Op{txn(0, OK, "", 0, 0, 1, stStart)}, false, 0},
		{"start stop start in one transaction is two generations", []Op{w(0, Create, OK, 0, 1), txn(0, OK, "", 0, 2, 3, stStart, stStop, stStart), list(1, Linearizable, Domain{Exists: true, Running: true, Gen: 2}, 4, 5)}, true, 0},
		{"an unknown transaction that took effect whole", []Op{w(0, Create, OK, 0, 1), txn(0, Unknown, "", 0, 2, 3, stStart, stColoc), read(1, Linearizable, Domain{Exists: true, Running: true, Gen: 1, Placement: "PREFER COLOCATION"}, 2, 10, 11)}, true, 0},
		{"an unknown transaction that took effect in part", []Op{w(0, Create, OK, 0, 1), txn(0, Unknown, "", 0, 2, 3, stStart, stColoc), read(1, Linearizable, running1, 2, 10, 11)}, false, 0},
		{"a transaction of alters to the placement held commits nothing", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), txn(0, OK, "", 0, 4, 5, stNeut, stNeut), read(0, Local, stopped0, 1, 6, 7)}, true, 0},
		{"a transaction that starts must show", []Op{w(0, Create, OK, 0, 1), read(0, Local, stopped0, 1, 2, 3), txn(0, OK, "", 0, 4, 5, stNeut, stStart), read(0, Local, stopped0, 1, 6, 7)}, true, 1},
		{"two states at one revision", []Op{w(0, Create, OK, 0, 1), w(0, Start, OK, 2, 3), w(0, Stop, OK, 4, 5), read(1, Local, running1, 2, 6, 7), read(2, Local, stopped1, 2, 8, 9)}, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rep, err := Check(c.ops, 10*time.Second, dir, "h")
			require.NoError(t, err)
			require.False(t, rep.Undecided)
			require.Equal(t, c.linearizable, rep.Linearizable)
			require.Len(t, rep.Local, c.local, "%q", rep.Local)
			if c.linearizable && c.local == 0 {
				require.Zero(t, rep.Anomalies())
				require.Empty(t, rep.Visualization)
				return
			}
			require.NotZero(t, rep.Anomalies())
			b, err := os.ReadFile(rep.Visualization)
			require.NoError(t, err)
			require.Contains(t, string(b), "<html")
		})
	}
}

func TestUnknownsCounted(t *testing.T) {
	rep, err := Check([]Op{w(0, Create, Unknown, 0, 1), w(1, Start, Unknown, 0, 1)}, time.Second, t.TempDir(), "h")
	require.NoError(t, err)
	require.Equal(t, 2, rep.Unknowns)
	require.Equal(t, 2, rep.Ops)
	require.True(t, rep.Linearizable)
}

// FuzzCheck: no history makes the checker panic, and a history of one
// client's OK writes alone (no reads) is always linearizable when each is
// what the rule allows.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{1, 2, 3, 6, 4, 5})
	f.Add([]byte{6, 6, 1, 1, 5, 5, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 40 {
			b = b[:40]
		}
		var ops, legal []Op
		var d Domain
		for i, x := range b {
			k := Kind(x%7) + 1
			out := Outcome(x/6%3) + 1
			op := Op{Client: int(x) % 3, Input: Input{Kind: k, Domain: "d", Placement: "NEUTRAL", Level: Level(x / 18 % 2)},
				Output: Output{Outcome: out, Refusal: RefusedNotFound, Saw: d, Revision: uint64(i)}, Call: int64(2 * i), Return: int64(2*i + 1)}
			ops = append(ops, op)
			next, why := apply(d, op.Input)
			if why == "" && k != Read && k != List {
				op.Output = Output{Outcome: OK}
				op.Client = 0
				legal = append(legal, op)
				d = next
			}
		}
		_, err := Check(ops, time.Second, t.TempDir(), "h")
		require.NoError(t, err)
		rep, err := Check(legal, time.Second, t.TempDir(), "h")
		require.NoError(t, err)
		require.True(t, rep.Linearizable || rep.Undecided)
	})
}
