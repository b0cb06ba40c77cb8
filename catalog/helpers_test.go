package catalog

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/lifecycle"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// quietLogger discards everything below Warn, so test output stays
// readable while raft's warnings still show up on failure.
func quietLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// openNode opens a node for the test and closes it at cleanup.
func openNode(t testing.TB, cfg Config) *Replica {
	t.Helper()
	if cfg.NodeName == "" {
		cfg.NodeName = "local"
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func createCmd(name string, pace lifecycle.Pace) lifecycle.Command {
	c := &lifecycle.CreateDomain{Name: name, Pace: pace}
	if pace == lifecycle.Paced {
		c.Period = uint64(time.Second)
		c.Skew = uint64(100 * time.Millisecond)
	}
	return lifecycle.Command{Op: lifecycle.OpCreateDomain, CreateDomain: c}
}

func registerCmd(name string, incarnation uint64) lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
		Name: name, Incarnation: incarnation, RaftID: "raft-" + name, RaftAddr: "addr-" + name,
	}}
}

// startCmd is a resolved START AT '<origin>' TIME RATE rate sampled at wall.
func startCmd(name string, authority *lifecycle.Identity, wall, origin int64, rate float64) lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpStart, Start: &lifecycle.Start{Domain: name, Resolved: lifecycle.ResolvedStart{
		Point:     lifecycle.StartPoint{Mode: lifecycle.StartAt, LogicalStart: origin, Rate: rate, WallStartedAt: wall},
		Authority: authority,
	}}}
}

func stopCmd(name string) lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: name}}
}

func alterCmd(name string, p lifecycle.Placement) lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpAlterPlacement, AlterPlacement: &lifecycle.AlterPlacement{Domain: name, Placement: p}}
}

func encode(t testing.TB, c lifecycle.Command) []byte {
	t.Helper()
	b, err := lifecycle.EncodeCommand(c)
	require.NoError(t, err)
	return b
}

// logs turns commands into consecutive committed command entries starting
// at index first.
func logs(t testing.TB, first uint64, cmds ...lifecycle.Command) []*raft.Log {
	out := make([]*raft.Log, len(cmds))
	for i, c := range cmds {
		out[i] = &raft.Log{Index: first + uint64(i), Term: 1, Type: raft.LogCommand, Data: encode(t, c)}
	}
	return out
}

// snapshotBytes persists the FSM's current snapshot into memory.
func snapshotBytes(t testing.TB, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	require.NoError(t, err)
	sink := &memSink{}
	require.NoError(t, snap.Persist(sink))
	snap.Release()
	require.True(t, sink.closed)
	return sink.Bytes()
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }

// statesEqual compares two catalogs by their canonical snapshot bytes,
// which cover every domain field, the registry and the revision.
func requireSameState(t testing.TB, want, got *lifecycle.State) {
	t.Helper()
	wb, err := want.MarshalSnapshot()
	require.NoError(t, err)
	gb, err := got.MarshalSnapshot()
	require.NoError(t, err)
	require.JSONEq(t, string(wb), string(gb))
	require.Equal(t, want.Domains(), got.Domains())
	require.Equal(t, want.Nodes(), got.Nodes())
	require.Equal(t, want.Revision(), got.Revision())
}

var _ io.Writer = testWriter{}
