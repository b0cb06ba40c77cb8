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

// TestDecodeBinaryRefuses covers each strictness rule of the binary form,
// and the message that names what is wrong and at which byte.
func TestDecodeBinaryRefuses(t *testing.T) {
	stop := []byte{formatBinaryV1, 5, 1, 'x'} // STOP x
	require.NoError(t, decodeOK(stop))
	rate := []byte{formatBinaryV1, 4, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f} // START x: mode, origin, rate 1
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"format byte only", []byte{formatBinaryV1}, "it ends at byte 1 in the middle of a field"},
		{"unknown format", []byte{0x03, 5, 1, 'x'}, "command format 0x03 is not known to this build"},
		{"v2 without a request id", []byte{formatBinaryV2, 0, 5, 1, 'x'}, "format 0x02 carries an empty request id"},
		{"v2 request id past the end", []byte{formatBinaryV2, 9, 'r', 5, 1, 'x'}, "the string at byte 1 claims 9 bytes but only 4 remain"},
		{"v2 request id not UTF-8", []byte{formatBinaryV2, 1, 0xff, 5, 1, 'x'}, "the string at byte 1 is not valid UTF-8"},
		{"v2 request id only", []byte{formatBinaryV2, 1, 'r'}, "it ends at byte 3 in the middle of a field"},
		{"v2 trailing byte", []byte{formatBinaryV2, 1, 'r', 5, 1, 'x', 0}, "command has 1 trailing bytes after its stop payload"},
		{"zero format", []byte{0x00, 5, 1, 'x'}, "command format 0x00 is not known to this build"},
		{"op code 0", []byte{formatBinaryV1, 0, 1, 'x'}, "op code 0 at byte 1 is unknown"},
		{"op code past the last", []byte{formatBinaryV1, byte(len(opCodes)), 1, 'x'}, fmt.Sprintf("op code %d at byte 1 is unknown", len(opCodes))},
		{"trailing byte", append(append([]byte{}, stop...), 0), "command has 1 trailing bytes after its stop payload"},
		{"trailing bytes", append(append([]byte{}, stop...), 0, 0, 0), "command has 3 trailing bytes after its stop payload"},
		{"string longer than the rest", []byte{formatBinaryV1, 5, 2, 'x'}, "the string at byte 2 claims 2 bytes but only 1 remain"},
		{"string length overflows", []byte{formatBinaryV1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'x'},
			"the string at byte 2 claims 18446744073709551615 bytes but only 1 remain"},
		{"varint past 64 bits", []byte{formatBinaryV1, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "byte 2 does not start a valid varint"},
		{"varint cut short", []byte{formatBinaryV1, 5, 0x80}, "byte 2 does not start a valid varint"},
		{"non-minimal varint", []byte{formatBinaryV1, 5, 0x81, 0x00, 'x'}, "the varint at byte 2 is not minimally encoded"},
		{"invalid UTF-8", []byte{formatBinaryV1, 5, 1, 0xff}, "the string at byte 2 is not valid UTF-8"},
		{"empty name", []byte{formatBinaryV1, 5, 0}, "domain name is empty"},
		{"bool 2", []byte{formatBinaryV1, 3, 1, 'x', 2}, "byte 4 is 0x02 where 0 or 1 is expected"},
		{"presence 2", []byte{formatBinaryV1, 9, 1, 'x', 1, 0, 0, 0, 2}, "byte 8 is 0x02 where 0 or 1 is expected"},
		{"step code 0", []byte{formatBinaryV1, 6, 1, 'x', 1, 0, 0, 0}, "step code 0 at byte 5 is unknown"},
		{"step code past the last", []byte{formatBinaryV1, 6, 1, 'x', 1, byte(len(stepCodes)), 0, 0}, fmt.Sprintf("step code %d at byte 5 is unknown", len(stepCodes))},
		{"step count beyond the rest", []byte{formatBinaryV1, 6, 1, 'x', 2, 2, 0, 0}, "the list at byte 4 claims 2 elements but only 3 bytes remain"},
		{"huge step count", []byte{formatBinaryV1, 6, 1, 'x', 0xff, 0xff, 0xff, 0xff, 0x0f}, "the list at byte 4 claims 4294967295 elements but only 0 bytes remain"},
		{"stop step with a placement", []byte{formatBinaryV1, 6, 1, 'x', 1, 2, 0, 1, 0}, "transaction step 1 (stop): STOP step carries a payload"},
		{"placement out of range", []byte{formatBinaryV1, 2, 1, 'x', 4}, "domain 'x': placement out of range"},
		{"truncated rate", []byte{formatBinaryV1, 4, 1, 'x', 0, 0, 0, 0, 0}, "it ends at byte 6 in the middle of a number"},
		{"nothing after the rate", rate, "byte 14 does not start a valid varint"},
		{"restore count beyond the rest", []byte{formatBinaryV1, 10, 1}, "the list at byte 2 claims 1 elements but only 0 bytes remain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCommand(tc.in)
			require.ErrorIs(t, err, ErrInvalidCommand)
			require.Contains(t, err.Error(), tc.msg)
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
