package lifecycle

import (
	"bytes"
	"encoding/json"
	"os"
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
		{"unknown format", []byte{0x02, 5, 1, 'x'}},
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
