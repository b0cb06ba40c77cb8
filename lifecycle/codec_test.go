package lifecycle

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLegacyJSONCommandsReplay decodes the JSON commands that builds before
// the binary format committed (testdata/commands-json.golden, one per line,
// frozen: never regenerate it). Each still decodes to the command it was
// written from, and its binary encoding decodes to the same command.
func TestLegacyJSONCommandsReplay(t *testing.T) {
	raw, err := os.ReadFile("testdata/commands-json.golden")
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	want := append(validCommands(), restoreCommands()...)
	require.Len(t, lines, len(want))
	for i, line := range lines {
		t.Run(string(want[i].Op), func(t *testing.T) {
			c, err := DecodeCommand(line)
			require.NoError(t, err)
			require.Equal(t, normalized(want[i]), normalized(c))
			again, err := json.Marshal(c)
			require.NoError(t, err)
			require.JSONEq(t, string(line), string(again), "the JSON field names are unchanged")
			bin, err := EncodeCommand(c)
			require.NoError(t, err)
			require.Equal(t, formatBinaryV1, bin[0])
			back, err := DecodeCommand(bin)
			require.NoError(t, err)
			require.Equal(t, normalized(c), normalized(back))
		})
	}
}

// TestDecodeBinaryRefuses covers each strictness rule of the binary form.
func TestDecodeBinaryRefuses(t *testing.T) {
	stop := []byte{formatBinaryV1, 5, 1, 'x'} // STOP x
	require.NoError(t, decodeOK(stop))
	tests := []struct {
		name string
		in   []byte
	}{
		{"format byte only", []byte{formatBinaryV1}},
		{"unknown format", []byte{0x03, 5, 1, 'x'}},
		{"v2 without a request id", []byte{formatBinaryV2, 0, 5, 1, 'x'}},
		{"v2 request id past the end", []byte{formatBinaryV2, 9, 'r', 5, 1, 'x'}},
		{"v2 request id not UTF-8", []byte{formatBinaryV2, 1, 0xff, 5, 1, 'x'}},
		{"v2 request id only", []byte{formatBinaryV2, 1, 'r'}},
		{"v2 trailing byte", []byte{formatBinaryV2, 1, 'r', 5, 1, 'x', 0}},
		{"zero format", []byte{0x00, 5, 1, 'x'}},
		{"op code 0", []byte{formatBinaryV1, 0, 1, 'x'}},
		{"op code past the last", []byte{formatBinaryV1, byte(len(opCodes)), 1, 'x'}},
		{"trailing byte", append(append([]byte{}, stop...), 0)},
		{"string longer than the rest", []byte{formatBinaryV1, 5, 2, 'x'}},
		{"string length overflows", []byte{formatBinaryV1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'x'}},
		{"varint past 64 bits", []byte{formatBinaryV1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"non-minimal varint", []byte{formatBinaryV1, 5, 0x81, 0x00, 'x'}},
		{"invalid UTF-8", []byte{formatBinaryV1, 5, 1, 0xff}},
		{"empty name", []byte{formatBinaryV1, 5, 0}},
		{"bool 2", []byte{formatBinaryV1, 3, 1, 'x', 2}},
		{"presence 2", []byte{formatBinaryV1, 9, 1, 'x', 1, 0, 0, 0, 2}},
		{"step code 0", []byte{formatBinaryV1, 6, 1, 'x', 1, 0, 0, 0}},
		{"step code past the last", []byte{formatBinaryV1, 6, 1, 'x', 1, byte(len(stepCodes)), 0, 0}},
		{"step count beyond the rest", []byte{formatBinaryV1, 6, 1, 'x', 2, 2, 0, 0}},
		{"huge step count", []byte{formatBinaryV1, 6, 1, 'x', 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"stop step with a placement", []byte{formatBinaryV1, 6, 1, 'x', 1, 2, 0, 1, 0}},
		{"placement out of range", []byte{formatBinaryV1, 2, 1, 'x', 4}},
		{"truncated rate", []byte{formatBinaryV1, 4, 1, 'x', 0, 0, 0, 0, 0}},
		{"restore count beyond the rest", []byte{formatBinaryV1, 10, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCommand(tc.in)
			require.ErrorIs(t, err, ErrInvalidCommand)
		})
	}
}

func decodeOK(b []byte) error { _, err := DecodeCommand(b); return err }

// TestDecodeBinaryBoundaries checks the length and count caps at, inside
// and just outside the bytes that remain.
func TestDecodeBinaryBoundaries(t *testing.T) {
	// A string that exactly fills the rest decodes; one byte more does not.
	require.NoError(t, decodeOK([]byte{formatBinaryV1, 5, 3, 'a', 'b', 'c'}))
	require.ErrorIs(t, decodeOK([]byte{formatBinaryV1, 5, 4, 'a', 'b', 'c'}), ErrInvalidCommand)
	// Two STOP steps take exactly 2*minStepSize bytes.
	two := []byte{formatBinaryV1, 6, 1, 'x', 2, 2, 0, 0, 2, 0, 0}
	require.NoError(t, decodeOK(two))
	three := append(append([]byte{}, two[:4]...), 3)
	three = append(three, two[5:]...)
	require.ErrorIs(t, decodeOK(three), ErrInvalidCommand)

	d := &decoder{b: []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, text: string(make([]byte, 10))}
	require.Equal(t, 3, d.count(minStepSize)) // 9 bytes remain: 3 steps fit
	require.Nil(t, d.err)
	d = &decoder{b: []byte{4, 0, 0, 0, 0, 0, 0, 0, 0, 0}, text: string(make([]byte, 10))}
	require.Zero(t, d.count(minStepSize)) // 4 steps need 12
	require.ErrorIs(t, d.err, ErrInvalidCommand)

	// Every proper prefix of every valid encoding is refused.
	for _, c := range append(validCommands(), restoreCommands()...) {
		b, err := EncodeCommand(c)
		require.NoError(t, err)
		for n := range len(b) {
			require.ErrorIs(t, decodeOK(b[:n]), ErrInvalidCommand, "%s cut to %d bytes", c.Op, n)
		}
	}
}

func TestEncodeCommandRefusesInvalidUTF8(t *testing.T) {
	_, err := EncodeCommand(stopCmd("bad\xff"))
	require.ErrorIs(t, err, ErrInvalidCommand)
	_, err = EncodeCommand(Command{Op: OpRegisterNode, RegisterNode: &RegisterNode{Name: "n", Incarnation: 1, APIAddr: "\xc3"}})
	require.ErrorIs(t, err, ErrInvalidCommand)
}

var update = flag.Bool("update", false, "rewrite the binary command golden file")

// withRequestIDs returns the commands of cs with a request id each.
func withRequestIDs(cs []Command) []Command {
	out := make([]Command, len(cs))
	for i, c := range cs {
		c.RequestID = fmt.Sprintf("n1-5eed-%d", i+1)
		out[i] = c
	}
	return out
}

// TestBinaryCommandsGolden freezes both binary formats: every valid
// command without a request id (format 1, what every entry committed
// before request ids is) and with one (format 2), one hex line each in
// testdata/commands-binary.golden. A change to the encoding fails here;
// regenerate with -update only for a new command, never for an old one.
func TestBinaryCommandsGolden(t *testing.T) {
	all := append(validCommands(), restoreCommands()...)
	cmds := append(all, withRequestIDs(all)...)
	var got strings.Builder
	for _, c := range cmds {
		b, err := EncodeCommand(c)
		require.NoError(t, err)
		fmt.Fprintf(&got, "%s\n", hex.EncodeToString(b))
	}
	const path = "testdata/commands-binary.golden"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got.String()), 0o644))
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(raw), got.String())
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	require.Len(t, lines, len(cmds))
	for i, line := range lines {
		b, err := hex.DecodeString(line)
		require.NoError(t, err)
		c, err := DecodeCommand(b)
		require.NoError(t, err, "line %d", i+1)
		require.Equal(t, normalized(cmds[i]), normalized(c), "line %d", i+1)
		want := formatBinaryV1
		if cmds[i].RequestID != "" {
			want = formatBinaryV2
		}
		require.Equal(t, want, b[0], "line %d", i+1)
	}
}

// TestRequestIDEncoding covers the request id's place in the formats:
// format 2 is format 1 with the id spliced in after the format byte, and
// an over-long id is refused before anything is encoded.
func TestRequestIDEncoding(t *testing.T) {
	for _, c := range append(validCommands(), restoreCommands()...) {
		v1, err := EncodeCommand(c)
		require.NoError(t, err)
		c.RequestID = "n2-ab-7"
		v2, err := EncodeCommand(c)
		require.NoError(t, err)
		want := append([]byte{formatBinaryV2, 7}, "n2-ab-7"...)
		require.Equal(t, append(want, v1[1:]...), v2, "%s", c.Op)
		back, err := DecodeCommand(v2)
		require.NoError(t, err)
		require.Equal(t, "n2-ab-7", back.RequestID)
	}
	long := stopCmd("x")
	long.RequestID = strings.Repeat("r", MaxRequestIDLen)
	_, err := EncodeCommand(long)
	require.NoError(t, err)
	long.RequestID += "r"
	_, err = EncodeCommand(long)
	require.ErrorIs(t, err, ErrInvalidCommand)
	bad := stopCmd("x")
	bad.RequestID = "\xff"
	_, err = EncodeCommand(bad)
	require.ErrorIs(t, err, ErrInvalidCommand)
}
