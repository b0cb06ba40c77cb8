package catalog

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// scenario is a lifecycle history touching every command kind the FSM
// replicates: registry, paced and unpaced domains, start, stop, restart,
// placement, a transaction and a refused command.
func scenario() []lifecycle.Command {
	a := &lifecycle.Identity{Node: "a", Incarnation: 7}
	p := lifecycle.PreferColocation
	return []lifecycle.Command{
		registerCmd("a", 7),
		createCmd("prod", lifecycle.Paced),
		createCmd("wall", lifecycle.Unpaced),
		startCmd("prod", a, 1_700_000_000_000_000_000, 1_767_225_600_000_000_000, 60),
		startCmd("wall", nil, 1_700_000_000_000_000_001, 1_700_000_000_000_000_001, 1),
		stopCmd("prod"),
		startCmd("prod", a, 1_700_000_100_000_000_000, -5, 0.5),
		createCmd("prod", lifecycle.Paced), // refused: already exists
		{Op: lifecycle.OpTransaction, Transaction: &lifecycle.Transaction{Domain: "wall", Steps: []lifecycle.Step{
			{Op: lifecycle.StepStop},
			{Op: lifecycle.StepAlterPlacement, Placement: &p},
		}}},
	}
}

func TestFSMApply(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	var want []lifecycle.Result
	ref := lifecycle.NewState()
	for _, c := range scenario() {
		want = append(want, ref.Apply(c))
	}
	var got []any
	for _, l := range logs(t, 1, scenario()...) {
		got = append(got, f.Apply(l))
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, &want[i], got[i], "entry %d", i+1)
	}
	require.ErrorIs(t, got[7].(*lifecycle.Result).Err(), lifecycle.ErrDomainExists)
	requireSameState(t, ref, f.State())
	require.Equal(t, ref.Revision(), f.Revision())

	prod, ok := f.State().Domain("prod")
	require.True(t, ok)
	require.Equal(t, uint64(2), prod.Generation)
	require.Equal(t, lifecycle.Running, prod.Status)
	require.NotNil(t, prod.Mapping)
	require.Equal(t, int64(-5), prod.Mapping.LogicalStart)
	wall, _ := f.State().Domain("wall")
	require.Equal(t, lifecycle.Stopped, wall.Status)
	require.Equal(t, lifecycle.PreferColocation, wall.Placement)
}

func TestFSMApplyBatchMatchesApply(t *testing.T) {
	one := NewFSM(quietLogger(t), nil)
	batch := NewFSM(quietLogger(t), nil)
	entries := logs(t, 1, scenario()...)
	// raft hands configuration and no-op entries to a batching FSM too.
	entries = append([]*raft.Log{{Index: 0, Type: raft.LogConfiguration, Data: []byte("not a command")}}, entries...)
	entries = append(entries, &raft.Log{Index: 99, Type: raft.LogNoop})
	var singles []any
	for _, l := range entries {
		singles = append(singles, one.Apply(l))
	}
	require.Equal(t, singles, batch.ApplyBatch(entries))
	require.Nil(t, singles[0])
	require.Nil(t, singles[len(singles)-1])
	requireSameState(t, one.State(), batch.State())
}

func TestFSMPublishedStateIsImmutable(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	f.ApplyBatch(logs(t, 1, createCmd("a", lifecycle.Unpaced)))
	before := f.State()
	f.ApplyBatch(logs(t, 2, createCmd("b", lifecycle.Unpaced), alterCmd("a", lifecycle.SuggestSeparation)))
	after := f.State()
	require.NotSame(t, before, after)
	require.Len(t, before.Domains(), 1)
	a, _ := before.Domain("a")
	require.Equal(t, lifecycle.Neutral, a.Placement)
	require.Len(t, after.Domains(), 2)

	// A batch that changes nothing publishes nothing.
	f.ApplyBatch(logs(t, 4, createCmd("a", lifecycle.Unpaced)))
	require.Same(t, after, f.State())
}

func TestFSMSnapshotRestoreIdentical(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	f.ApplyBatch(logs(t, 1, scenario()...))
	data := snapshotBytes(t, f)

	var changes []Change
	fresh := NewFSM(quietLogger(t), func(c Change) { changes = append(changes, c) })
	require.NoError(t, fresh.Restore(io.NopCloser(bytes.NewReader(data))))
	requireSameState(t, f.State(), fresh.State())
	require.Equal(t, []Change{{Revision: f.Revision(), State: fresh.State(), Restored: true}}, changes)

	// The restored FSM continues exactly like the original.
	next := logs(t, 100, stopCmd("prod"), createCmd("later", lifecycle.Paced))
	require.Equal(t, f.ApplyBatch(next), fresh.ApplyBatch(next))
	requireSameState(t, f.State(), fresh.State())
	require.Equal(t, snapshotBytes(t, f), snapshotBytes(t, fresh))
}

func TestFSMRestoreReplacesState(t *testing.T) {
	src := NewFSM(quietLogger(t), nil)
	src.ApplyBatch(logs(t, 1, createCmd("kept", lifecycle.Unpaced)))
	data := snapshotBytes(t, src)

	dst := NewFSM(quietLogger(t), nil)
	dst.ApplyBatch(logs(t, 1, registerCmd("x", 1), createCmd("gone", lifecycle.Paced),
		createCmd("other", lifecycle.Unpaced), alterCmd("other", lifecycle.RequireColocation)))
	require.Greater(t, dst.Revision(), src.Revision())
	require.NoError(t, dst.Restore(io.NopCloser(bytes.NewReader(data))))
	requireSameState(t, src.State(), dst.State())
	_, ok := dst.State().Node("x")
	require.False(t, ok, "restore must replace the registry, not merge")
}

func TestFSMRestoreRefusesBadSnapshot(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	f.ApplyBatch(logs(t, 1, createCmd("a", lifecycle.Unpaced)))
	before := f.State()
	var framed bytes.Buffer
	require.NoError(t, writeSnapshot(&framed, []byte(`{"version":2}`)))
	for name, data := range map[string][]byte{
		"empty":           nil,
		"garbage":         []byte("garbage"),
		"invalid payload": framed.Bytes(),
	} {
		t.Run(name, func(t *testing.T) {
			err := f.Restore(io.NopCloser(bytes.NewReader(data)))
			require.ErrorIs(t, err, ErrSnapshot)
			require.Same(t, before, f.State(), "a refused restore leaves the state alone")
		})
	}
}

func TestFSMHaltsOnUndecodableEntry(t *testing.T) {
	f := NewFSM(quietLogger(t), nil)
	entries := logs(t, 1, createCmd("a", lifecycle.Unpaced))
	entries = append(entries, &raft.Log{Index: 2, Type: raft.LogCommand, Data: []byte(`{"op":"warp"}`)})
	entries = append(entries, logs(t, 3, createCmd("b", lifecycle.Unpaced))...)
	out := f.ApplyBatch(entries)

	require.IsType(t, &lifecycle.Result{}, out[0])
	for _, r := range out[1:] {
		var h *HaltError
		require.ErrorAs(t, r.(error), &h)
		require.Equal(t, uint64(2), h.Index)
		require.ErrorIs(t, h, ErrHalted)
		require.ErrorIs(t, h.Err, lifecycle.ErrInvalidCommand)
	}
	select {
	case <-f.Halted():
	default:
		t.Fatal("Halted is not closed")
	}
	// Nothing after the bad entry was applied, and no snapshot can claim it.
	require.Len(t, f.State().Domains(), 1)
	_, err := f.Snapshot()
	require.ErrorIs(t, err, ErrHalted)
	require.ErrorIs(t, f.Apply(logs(t, 4, createCmd("c", lifecycle.Unpaced))[0]).(error), ErrHalted)
}

func TestFSMChangesInCommitOrder(t *testing.T) {
	var revs []uint64
	f := NewFSM(quietLogger(t), func(c Change) {
		require.False(t, c.Restored)
		require.Equal(t, c.Revision, c.State.Revision())
		revs = append(revs, c.Revision)
	})
	sub := f.changes.subscribe()
	defer sub.Close()
	first := <-sub.C()
	require.Equal(t, uint64(0), first.Revision)

	idx := uint64(1)
	for i := range 5 {
		var batch []lifecycle.Command
		for j := range i + 1 {
			batch = append(batch, createCmd(string(rune('a'+i))+string(rune('a'+j)), lifecycle.Unpaced))
		}
		f.ApplyBatch(logs(t, idx, batch...))
		idx += uint64(len(batch))
	}
	require.Equal(t, []uint64{1, 3, 6, 10, 15}, revs, "one change per batch, after its last entry")
	last := <-sub.C()
	require.Equal(t, uint64(15), last.Revision, "a slow subscriber reads the newest change")
	require.Same(t, f.State(), last.State)
}

func TestHaltErrorMessage(t *testing.T) {
	err := &HaltError{Index: 42, Err: errors.New("bad bytes")}
	require.Equal(t, "catalog halted at committed entry 42: bad bytes; inspect the data directory", err.Error())
}

// FuzzFSMRestore feeds arbitrary bytes to Restore: it must refuse or
// restore a valid catalog, never panic, and a restored catalog must
// snapshot to bytes that restore to the same state.
func FuzzFSMRestore(f *testing.F) {
	src := NewFSM(quietLogger(f), nil)
	f.Add(snapshotBytes(f, src))
	src.ApplyBatch(logs(f, 1, scenario()...))
	good := snapshotBytes(f, src)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(append([]byte(nil), good...), 0))
	f.Add([]byte(snapshotMagic))
	src.ApplyBatch(logs(f, 100, withID(createCmd("retried", lifecycle.Unpaced), "n1-1-1"), withID(stopCmd("gone"), "n1-1-2")))
	f.Add(snapshotBytes(f, src))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm := NewFSM(quietLogger(t), nil)
		if err := fsm.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
			require.ErrorIs(t, err, ErrSnapshot)
			require.Equal(t, uint64(0), fsm.Revision())
			return
		}
		again := NewFSM(quietLogger(t), nil)
		require.NoError(t, again.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, fsm)))))
		requireSameState(t, fsm.State(), again.State())
		require.Equal(t, fsm.requests.entries(), again.requests.entries())
	})
}

// FuzzFSMApply commits arbitrary bytes after a valid history: the FSM
// either applies them exactly as lifecycle.State.Apply would, or halts on
// that entry; it never panics and never changes state on a halt.
func FuzzFSMApply(f *testing.F) {
	for _, c := range scenario() {
		f.Add(encode(f, c))
	}
	f.Add([]byte(`{"op":"stop","stop":{"domain":"prod"}} trailing`))
	f.Add([]byte(`{}`))
	f.Add([]byte{})
	history := logs(f, 1, scenario()[:4]...)
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm := NewFSM(quietLogger(t), nil)
		fsm.ApplyBatch(history)
		ref := fsm.State().Clone()
		before := fsm.State()
		out := fsm.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: data})
		cmd, err := lifecycle.DecodeCommand(data)
		if err != nil {
			require.ErrorIs(t, out.(error), ErrHalted)
			require.Same(t, before, fsm.State())
			return
		}
		want := ref.Apply(cmd)
		require.Equal(t, &want, out)
		requireSameState(t, ref, fsm.State())
	})
}
