package lifecycle

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// largeState is a catalog in trie form, with paced running, stopped and
// unpaced domains and two nodes.
func largeState(t testing.TB) *State {
	s := baseState(t)
	for i := range flatMax + 40 {
		name := fmt.Sprintf("bulk-%03d", i)
		switch i % 3 {
		case 0:
			mustApply(t, s, createPaced(name), startCmd(name, point(StartAt, int64(i), utc0, 2), &nodeA))
		case 1:
			mustApply(t, s, createPaced(name))
		default:
			mustApply(t, s, createUnpaced(name))
		}
	}
	return s
}

// TestBinarySnapshotRoundTrip restores the binary snapshot of states of
// both table forms to an equal state, which encodes to the same bytes and
// the same JSON, and accepts commands as the original does.
func TestBinarySnapshotRoundTrip(t *testing.T) {
	for name, s := range map[string]*State{"empty": NewState(), "base": baseState(t), "rich": richState(t), "trie": largeState(t)} {
		t.Run(name, func(t *testing.T) {
			b, err := s.MarshalSnapshotBinary()
			require.NoError(t, err)
			got, err := RestoreSnapshot(b)
			require.NoError(t, err)
			requireSameState(t, s, got)
			require.Equal(t, s.RunsPacedDomain(), got.RunsPacedDomain())
			again, err := got.MarshalSnapshotBinary()
			require.NoError(t, err)
			require.Equal(t, b, again, "equal states give equal bytes")
			j1, err := s.MarshalSnapshot()
			require.NoError(t, err)
			j2, err := got.MarshalSnapshot()
			require.NoError(t, err)
			require.Equal(t, j1, j2)
			for _, c := range validCommands() {
				require.Equal(t, s.Clone().Apply(c), got.Clone().Apply(c))
			}
		})
	}
}

// TestBinarySnapshotGolden holds the format's bytes.
func TestBinarySnapshotGolden(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), createPaced("prod"), startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA))
	b, err := s.MarshalSnapshotBinary()
	require.NoError(t, err)
	require.Equal(t, "000303"+ // mark, version 3, revision 3
		"01"+"0470726f64"+"01"+"8094ebdc03"+"80c2d72f"+"00"+"01"+"01"+ // 1 domain: prod, paced, 1s, 100ms, neutral, running, generation 1
		"02"+"00"+"0000000000004e40"+"8080d0dfbd94b98631"+"01"+ // at 0, rate 60, wall utc0; mapping
		"066e6f64652d61"+"0b"+"01"+"03"+ // authority node-a#11 revision 1; record revision 3
		"01"+"066e6f64652d61"+"0b"+"0b726166742d6e6f64652d61"+"0b6e6f64652d613a37303030"+"0b6e6f64652d613a38303030"+"01"+"00", // node-a, not cordoned
		hex.EncodeToString(b))
}

// TestBinarySnapshotRefuses covers what a binary snapshot never holds: each
// refusal names what is wrong, and every cut of a valid snapshot is refused.
func TestBinarySnapshotRefuses(t *testing.T) {
	s := NewState()
	mustApply(t, s, register(nodeA), createPaced("prod"), createUnpaced("arch"), startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA))
	good, err := s.MarshalSnapshotBinary()
	require.NoError(t, err)
	for n := range len(good) {
		_, err := RestoreSnapshot(good[:n])
		require.ErrorIs(t, err, ErrInvalidSnapshot, "cut at %d of %d bytes", n, len(good))
	}
	dup := NewState()
	mustApply(t, dup, createUnpaced("a"), createUnpaced("b"))
	dupBytes, err := dup.MarshalSnapshotBinary()
	require.NoError(t, err)
	// Both records are 1-byte names of equal length: rename b to a.
	for i := range dupBytes {
		if i > 4 && dupBytes[i-1] == 1 && dupBytes[i] == 'b' {
			dupBytes[i] = 'a'
			break
		}
	}
	// The same past flatMax, where the table is a trie and a duplicate is
	// two neighbours in one of its leaves.
	big := NewState()
	for i := range flatMax + 8 {
		mustApply(t, big, createUnpaced(fmt.Sprintf("d%02d", i)))
	}
	bigBytes, err := big.MarshalSnapshotBinary()
	require.NoError(t, err)
	at := bytes.Index(bigBytes, []byte("\x03d21"))
	require.Greater(t, at, 0)
	bigBytes[at+3] = '0'         // d21 becomes d20
	arch := func(b []byte) int { // offset of arch's pace byte
		for i := 0; i+5 <= len(b); i++ {
			if string(b[i:i+5]) == "\x04arch" {
				return i + 5
			}
		}
		t.Fatal("no arch")
		return 0
	}
	with := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		b    []byte
		msg  string
	}{
		{"version 4", with(func(b []byte) []byte { b[1] = 4; return b }), "format version 4 is not supported; this build reads versions 1, 2 and 3"},
		{"version 1 in binary", with(func(b []byte) []byte { b[1] = 1; return b }), "format version 1 is not supported"},
		{"trailing byte", append(append([]byte(nil), good...), 0), "has trailing data"},
		{"pace out of range", with(func(b []byte) []byte { b[arch(b)] = 2; return b }), "enum out of range"},
		{"unpaced with period", with(func(b []byte) []byte { b[arch(b)+1] = 5; return b }), "domain 'arch': unpaced with a PERIOD or SKEW"},
		{"duplicate domain", dupBytes, "domain 'a' appears twice"},
		{"duplicate domain in a trie", bigBytes, "domain 'd20' appears twice"},
		{"count beyond the bytes", []byte{0, 2, 0, 100}, "claims 100 elements"},
		{"non-minimal varint", []byte{0, 2, 0x80, 0x00, 0, 0}, "not minimally encoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RestoreSnapshot(tt.b)
			require.ErrorIs(t, err, ErrInvalidSnapshot)
			require.ErrorContains(t, err, tt.msg)
		})
	}
	_, err = RestoreSnapshot(good)
	require.NoError(t, err, "the unmutated snapshot restores: the refusals above are the mutation")

	// A node registered by the snapshot's last command (registration at
	// the catalog revision itself) restores; one of incarnation 0 or with
	// no name is refused.
	nodes := NewState()
	mustApply(t, nodes, register(nodeA))
	nodeBytes, err := nodes.MarshalSnapshotBinary()
	require.NoError(t, err)
	restored, err := RestoreSnapshot(nodeBytes)
	require.NoError(t, err, "a registration at the snapshot's own revision")
	n, ok := restored.Node(nodeA.Node)
	require.True(t, ok)
	require.Equal(t, restored.Revision(), n.Registered)
	name := bytes.Index(nodeBytes, []byte("\x06node-a"))
	require.Greater(t, name, 0)
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"incarnation 0", func(b []byte) []byte { b[name+7] = 0; return b }},
		{"no name", func(b []byte) []byte { return append(append(b[:name:name], 0), b[name+7:]...) }},
	} {
		b := tc.edit(bytes.Clone(nodeBytes))
		_, err := RestoreSnapshot(b)
		require.ErrorIs(t, err, ErrInvalidSnapshot, tc.name)
		require.ErrorContains(t, err, "is not a valid registration", tc.name)
	}
}

// FuzzRestoreBinarySnapshot decodes any bytes behind the binary mark: it
// never panics, refuses with ErrInvalidSnapshot, and what it accepts is a
// valid state whose snapshot is the input byte for byte.
func FuzzRestoreBinarySnapshot(f *testing.F) {
	for _, s := range []*State{NewState(), baseState(f), richState(f), largeState(f)} {
		b, err := s.MarshalSnapshotBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[1:])
	}
	f.Fuzz(func(t *testing.T, rest []byte) {
		b := append([]byte{binarySnapshotMark}, rest...)
		s, err := RestoreSnapshot(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidSnapshot)
			return
		}
		for _, d := range s.Domains() {
			require.NoError(t, validateDomain(d))
		}
		again, err := s.MarshalSnapshotBinary()
		require.NoError(t, err)
		if s.count <= flatMax {
			require.Equal(t, b, again, "a canonical encoding")
		}
		back, err := RestoreSnapshot(again)
		require.NoError(t, err)
		requireSameState(t, s, back)
		for _, c := range validCommands() {
			s.Apply(c)
		}
	})
}

// TestRangeVisitsEveryDomainOnce checks Range against Domains in both
// table forms, that it stops when fn returns false, and Len.
func TestRangeVisitsEveryDomainOnce(t *testing.T) {
	for name, s := range map[string]*State{"empty": NewState(), "flat": baseState(t), "trie": largeState(t)} {
		t.Run(name, func(t *testing.T) {
			var got []Domain
			s.Range(func(d Domain) bool { got = append(got, d); return true })
			want := s.Domains()
			require.ElementsMatch(t, want, got)
			require.Equal(t, len(want), s.Len())
			if len(want) > 1 {
				calls := 0
				s.Range(func(Domain) bool { calls++; return calls < 2 })
				require.Equal(t, 2, calls, "Range stops once fn returns false")
			}
		})
	}
}
