package lifecycle

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func cordonCmd(name string, cordoned bool) Command {
	return Command{Op: OpCordonNode, CordonNode: &CordonNode{Name: name, Cordoned: cordoned}}
}

// TestCordonApply covers the maintenance mark: it is set and cleared by
// name, a repeat is a no-op, an unknown node is refused, a restart (a new
// incarnation) keeps it and a deregistration drops it.
func TestCordonApply(t *testing.T) {
	tests := []struct {
		name     string
		cmds     []Command
		last     Command
		changed  bool
		code     Code
		cordoned bool
	}{
		{name: "cordon", last: cordonCmd("node-a", true), changed: true, cordoned: true},
		{name: "cordon again", cmds: []Command{cordonCmd("node-a", true)}, last: cordonCmd("node-a", true), cordoned: true},
		{name: "uncordon", cmds: []Command{cordonCmd("node-a", true)}, last: cordonCmd("node-a", false), changed: true},
		{name: "uncordon an uncordoned node", last: cordonCmd("node-a", false)},
		{name: "unknown node", last: cordonCmd("node-z", true), code: CodeUnknownNode},
		{name: "restart keeps the mark", cmds: []Command{cordonCmd("node-a", true)},
			last: register(Identity{Node: "node-a", Incarnation: 99}), changed: true, cordoned: true},
		{name: "address change keeps the mark", cmds: []Command{cordonCmd("node-a", true)},
			last: Command{Op: OpRegisterNode, RegisterNode: &RegisterNode{Name: "node-a", Incarnation: 11, APIAddr: "elsewhere:1"}}, changed: true, cordoned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseState(t)
			mustApply(t, s, tt.cmds...)
			before := s.Revision()
			r := s.Apply(tt.last)
			if tt.code != "" {
				require.Error(t, r.Err())
				require.Equal(t, tt.code, r.Failure.Code)
				require.Contains(t, r.Failure.Message, "SHOW CLUSTER STATUS")
				require.Equal(t, before, s.Revision())
				return
			}
			require.NoError(t, r.Err())
			require.Equal(t, tt.changed, r.Changed)
			n, ok := s.Node("node-a")
			require.True(t, ok)
			require.Equal(t, tt.cordoned, n.Cordoned)
		})
	}
}

func TestCordonDroppedByDeregistration(t *testing.T) {
	s := baseState(t)
	mustApply(t, s, cordonCmd("node-a", true),
		Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-a", Incarnation: 11}},
		register(Identity{Node: "node-a", Incarnation: 12}))
	n, ok := s.Node("node-a")
	require.True(t, ok)
	require.False(t, n.Cordoned, "a node removed and joined again starts uncordoned")
}

// TestCordonSnapshotRoundTrip restores the mark from both snapshot formats
// and reads the earlier binary version, which has none.
func TestCordonSnapshotRoundTrip(t *testing.T) {
	s := baseState(t)
	mustApply(t, s, cordonCmd("node-b", true))
	for name, enc := range map[string]func() ([]byte, error){"json": s.MarshalSnapshot, "binary": s.MarshalSnapshotBinary} {
		t.Run(name, func(t *testing.T) {
			b, err := enc()
			require.NoError(t, err)
			got, err := RestoreSnapshot(b)
			require.NoError(t, err)
			requireSameState(t, s, got)
			n, _ := got.Node("node-b")
			require.True(t, n.Cordoned)
			n, _ = got.Node("node-a")
			require.False(t, n.Cordoned)
		})
	}
	t.Run("binary version 2", func(t *testing.T) {
		plain := baseState(t)
		b, err := plain.MarshalSnapshotBinary()
		require.NoError(t, err)
		// Version 2 is version 3 without the trailing cordoned byte of each node.
		v2 := append([]byte{}, b...)
		v2[1] = 2
		nodes := plain.Nodes()
		out := v2[:0:0]
		// Each node entry ends with its cordoned byte (0 here); cut them by
		// re-encoding the node list the version 2 way.
		e := encoder{}
		e.uvarint(uint64(len(nodes)))
		for _, n := range nodes {
			e.str(n.Name)
			e.uvarint(n.Incarnation)
			e.str(n.RaftID)
			e.str(n.RaftAddr)
			e.str(n.APIAddr)
			e.uvarint(n.Registered)
		}
		f := encoder{}
		f.uvarint(uint64(len(nodes)))
		for _, n := range nodes {
			f.str(n.Name)
			f.uvarint(n.Incarnation)
			f.str(n.RaftID)
			f.str(n.RaftAddr)
			f.str(n.APIAddr)
			f.uvarint(n.Registered)
			f.bool(false)
		}
		head := len(v2) - len(f.buf)
		require.Equal(t, f.buf, v2[head:])
		out = append(out, v2[:head]...)
		out = append(out, e.buf...)
		got, err := RestoreSnapshot(out)
		require.NoError(t, err)
		requireSameState(t, plain, got)
	})
}

// TestCordonPlacement: a cordoned node keeps the authority it holds, is
// given no new one while another candidate exists, and is used when every
// candidate is cordoned.
func TestCordonPlacement(t *testing.T) {
	voters := []string{"node-a", "node-b"}
	tests := []struct {
		name     string
		cordon   []string
		avail    []Identity
		wantLive *Identity // Reconcile's move of "live" (owned by node-a); nil: kept
		startTo  Identity  // where a START of "prod" goes
	}{
		{name: "none cordoned", avail: []Identity{nodeA, nodeB}, startTo: pickOf(t, "prod", nodeA, nodeB)},
		{name: "holder cordoned keeps it", cordon: []string{"node-a"}, avail: []Identity{nodeA, nodeB}, startTo: nodeB},
		{name: "other cordoned", cordon: []string{"node-b"}, avail: []Identity{nodeA, nodeB}, startTo: nodeA},
		{name: "holder gone, survivor cordoned: fall back", cordon: []string{"node-b"}, avail: []Identity{nodeB}, wantLive: &nodeB, startTo: nodeB},
		{name: "all cordoned: fall back", cordon: []string{"node-a", "node-b"}, avail: []Identity{nodeA, nodeB}, startTo: pickOf(t, "prod", nodeA, nodeB)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := baseState(t)
			for _, n := range tt.cordon {
				mustApply(t, s, cordonCmd(n, true))
			}
			var avail []NodeIncarnation
			for _, id := range tt.avail {
				n, _ := s.Node(id.Node)
				avail = append(avail, n.NodeIncarnation())
			}
			cmds := Reconcile(s, avail, voters)
			if tt.wantLive == nil {
				require.Empty(t, cmds)
			} else {
				require.Len(t, cmds, 1)
				require.Equal(t, tt.wantLive, cmds[0].ReassignAuthority.Authority)
			}
			d, _ := s.Domain("prod")
			r, err := ResolveStart(d, StartRequest{Mode: StartNow}, utc0, nil, s.PreferUncordoned(avail, voters), voters)
			require.NoError(t, err)
			require.Equal(t, tt.startTo, *r.Authority)
		})
	}
}

// TestCordonReconcileMovesToUncordoned: when the holder fails, the domain
// goes to an uncordoned node even where the hash would pick a cordoned one.
func TestCordonReconcileMovesToUncordoned(t *testing.T) {
	nodeC := Identity{Node: "node-c", Incarnation: 33}
	voters := []string{"node-a", "node-b", "node-c"}
	for _, cordoned := range []string{"node-b", "node-c"} {
		t.Run(cordoned, func(t *testing.T) {
			s := baseState(t)
			mustApply(t, s, register(nodeC), cordonCmd(cordoned, true))
			var avail []NodeIncarnation
			for _, name := range []string{"node-b", "node-c"} {
				n, _ := s.Node(name)
				avail = append(avail, n.NodeIncarnation())
			}
			cmds := Reconcile(s, avail, voters)
			require.Len(t, cmds, 1)
			require.NotEqual(t, cordoned, cmds[0].ReassignAuthority.Authority.Node)
			require.NoError(t, s.Apply(cmds[0]).Err())
		})
	}
}

func pickOf(t *testing.T, domain string, ids ...Identity) Identity {
	t.Helper()
	id, ok := pick(domain, ids)
	require.True(t, ok)
	return id
}

// TestCordonCommandCodec holds the cordon command's binary bytes (op code
// 11, the name, the mark) and its round trip through both encodings.
func TestCordonCommandCodec(t *testing.T) {
	for _, c := range []Command{cordonCmd("node-a", true), cordonCmd("node-b", false)} {
		b, err := EncodeCommand(c)
		require.NoError(t, err)
		back, err := DecodeCommand(b)
		require.NoError(t, err)
		require.Equal(t, c, back)
	}
	b, err := EncodeCommand(cordonCmd("node-a", true))
	require.NoError(t, err)
	require.Equal(t, "010b066e6f64652d6101", hex.EncodeToString(b))
	r := NewState().Apply(Command{Op: OpCordonNode})
	require.Error(t, r.Err(), "a cordon command without its payload is refused")
}
