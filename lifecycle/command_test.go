package lifecycle

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func encodeJSON(v any) ([]byte, error) { return json.Marshal(v) }

func decodeJSON(b []byte, v any) error { return json.Unmarshal(b, v) }

// validCommands is one command of every op and payload shape, with values
// at the edges of their ranges.
func validCommands() []Command {
	return []Command{
		createPaced("prod"),
		createUnpaced("arch"),
		{Op: OpCreateDomain, CreateDomain: &CreateDomain{Name: "edge", Pace: Paced, Period: math.MaxUint64, Skew: math.MaxUint64, Placement: SuggestSeparation, IfNotExists: true}},
		alterCmd("prod", PreferColocation),
		dropCmd("prod", true),
		dropCmd("prod", false),
		startCmd("prod", point(StartAt, math.MinInt64, math.MaxInt64, 5e-324), &nodeA),
		startCmd("prod", point(StartNow, utc0, utc0, math.MaxFloat64), &nodeA),
		startCmd("arch", point(StartResume, -1, 0, 0.1), nil),
		stopCmd("prod"),
		{Op: OpTransaction, Transaction: &Transaction{Domain: "prod", Steps: []Step{
			{Op: StepStop},
			{Op: StepStart, Start: &ResolvedStart{Point: point(StartResume, 5, 6, 1.5), Authority: &nodeB}},
			{Op: StepAlterPlacement, Placement: ptr(RequireColocation)},
		}}},
		{Op: OpTransaction, Transaction: &Transaction{Domain: "prod", Steps: []Step{}}},
		register(nodeA),
		{Op: OpRegisterNode, RegisterNode: &RegisterNode{Name: "ünïcode ☃", Incarnation: math.MaxUint64}},
		{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: "node-a", Incarnation: 11}},
		reassignCmd("prod", 3, AuthorityFence{Node: "node-a", Incarnation: 11, Revision: 4}, &nodeB),
		reassignCmd("prod", math.MaxUint64, AuthorityFence{Revision: math.MaxUint64}, nil),
	}
}

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range validCommands() {
		t.Run(string(c.Op), func(t *testing.T) {
			b, err := EncodeCommand(c)
			require.NoError(t, err)
			back, err := DecodeCommand(b)
			require.NoError(t, err)
			if c.Transaction != nil && len(c.Transaction.Steps) == 0 {
				// An empty step list decodes as an empty (non-nil) slice.
				require.Empty(t, back.Transaction.Steps)
				back.Transaction.Steps = c.Transaction.Steps
			}
			require.Equal(t, c, back)
			again, err := EncodeCommand(back)
			require.NoError(t, err)
			require.Equal(t, b, again)
		})
	}
}

// TestCommandGolden pins the binary encoding: these bytes are in committed
// logs, so a change here breaks replay.
func TestCommandGolden(t *testing.T) {
	tests := []struct {
		cmd  Command
		want string
	}{
		// format 1, op start, "prod", mode at, logical 0, rate 60.0 (LE
		// bits), wall utc0 (zig-zag varint), authority present,
		// "node-a", incarnation 11.
		{startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA),
			"01 04 04 70726f64 02 00 000000000000 4e40 8080d0dfbd94b98631 01 06 6e6f64652d61 0b"},
		// format 1, op create_domain, "prod", paced, period 1e9, skew 1e8,
		// neutral, not IF NOT EXISTS.
		{createPaced("prod"), "01 01 04 70726f64 01 8094ebdc03 80c2d72f 00 00"},
	}
	for _, tc := range tests {
		b, err := EncodeCommand(tc.cmd)
		require.NoError(t, err)
		require.Equal(t, strings.ReplaceAll(tc.want, " ", ""), hex.EncodeToString(b))
	}
}

func TestDecodeCommandRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ``},
		{"null", `null`},
		{"not an object", `[]`},
		{"unknown op", `{"op":"pause","stop":{"domain":"x"}}`},
		{"missing op", `{"stop":{"domain":"x"}}`},
		{"no payload", `{"op":"stop"}`},
		{"wrong payload", `{"op":"stop","drop_domain":{"name":"x"}}`},
		{"two payloads", `{"op":"stop","stop":{"domain":"x"},"drop_domain":{"name":"x"}}`},
		{"unknown top field", `{"op":"stop","stop":{"domain":"x"},"extra":1}`},
		{"unknown nested field", `{"op":"stop","stop":{"domain":"x","force":true}}`},
		{"trailing data", `{"op":"stop","stop":{"domain":"x"}} {}`},
		{"trailing garbage", `{"op":"stop","stop":{"domain":"x"}}x`},
		{"empty name", `{"op":"stop","stop":{"domain":""}}`},
		{"unknown pace", `{"op":"create_domain","create_domain":{"name":"x","pace":"paced","period_ns":1,"skew_ns":0,"placement":"NEUTRAL"}}`},
		{"numeric pace", `{"op":"create_domain","create_domain":{"name":"x","pace":1,"period_ns":1,"skew_ns":0,"placement":"NEUTRAL"}}`},
		{"unknown placement", `{"op":"alter_placement","alter_placement":{"domain":"x","placement":"ANYWHERE"}}`},
		{"negative period", `{"op":"create_domain","create_domain":{"name":"x","pace":"PACED","period_ns":-1,"skew_ns":0,"placement":"NEUTRAL"}}`},
		{"period overflow", `{"op":"create_domain","create_domain":{"name":"x","pace":"PACED","period_ns":18446744073709551616,"skew_ns":0,"placement":"NEUTRAL"}}`},
		{"fractional period", `{"op":"create_domain","create_domain":{"name":"x","pace":"PACED","period_ns":1.5,"skew_ns":0,"placement":"NEUTRAL"}}`},
		{"logical start overflow", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":9223372036854775808,"time_rate":1,"wall_started_at":0}}}}`},
		{"zero rate", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":0,"time_rate":0,"wall_started_at":0}}}}`},
		{"negative rate", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":0,"time_rate":-2,"wall_started_at":0}}}}`},
		{"rate overflow", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":0,"time_rate":1e309,"wall_started_at":0}}}}`},
		{"rate underflow to zero", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":0,"time_rate":1e-400,"wall_started_at":0}}}}`},
		{"unknown mode", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"later","logical_start":0,"time_rate":1,"wall_started_at":0}}}}`},
		{"authority without incarnation", `{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"now","logical_start":0,"time_rate":1,"wall_started_at":0},"authority":{"node":"a","incarnation":0}}}}`},
		{"step unknown", `{"op":"transaction","transaction":{"domain":"x","steps":[{"op":"drop"}]}}`},
		{"step payload mismatch", `{"op":"transaction","transaction":{"domain":"x","steps":[{"op":"stop","placement":"NEUTRAL"}]}}`},
		{"register zero incarnation", `{"op":"register_node","register_node":{"name":"a","incarnation":0,"raft_id":"","raft_addr":"","api_addr":""}}`},
		{"reassign half fence", `{"op":"reassign_authority","reassign_authority":{"domain":"x","expected_generation":1,"expected_fence":{"node":"","incarnation":3,"revision":1}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCommand([]byte(tc.in))
			require.ErrorIs(t, err, ErrInvalidCommand)
		})
	}
}

func TestDecodeCommandAcceptsJustInside(t *testing.T) {
	for _, in := range []string{
		`{"op":"create_domain","create_domain":{"name":"x","pace":"PACED","period_ns":18446744073709551615,"skew_ns":0,"placement":"NEUTRAL"}}`,
		`{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"at","logical_start":9223372036854775807,"time_rate":4.9e-324,"wall_started_at":-9223372036854775808}}}}`,
		`{"op":"start","start":{"domain":"x","resolved":{"point":{"mode":"now","logical_start":0,"time_rate":1.7976931348623157e308,"wall_started_at":0}}}}`,
		" \n{\"op\":\"stop\",\"stop\":{\"domain\":\"x\"}}\n ",
	} {
		_, err := DecodeCommand([]byte(in))
		require.NoError(t, err, in)
	}
}

func TestEncodeCommandRefusesInvalid(t *testing.T) {
	_, err := EncodeCommand(Command{Op: OpStop})
	require.ErrorIs(t, err, ErrInvalidCommand)
	_, err = EncodeCommand(startCmd("x", point(StartNow, 0, 0, math.NaN()), nil))
	require.ErrorIs(t, err, ErrInvalidCommand)
}

func TestEnumText(t *testing.T) {
	for _, p := range []Placement{Neutral, RequireColocation, PreferColocation, SuggestSeparation} {
		b, err := p.MarshalText()
		require.NoError(t, err)
		var back Placement
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, p, back)
	}
	for _, p := range []Pace{Unpaced, Paced} {
		b, err := p.MarshalText()
		require.NoError(t, err)
		var back Pace
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, p, back)
	}
	for _, st := range []Status{Stopped, Running} {
		b, err := st.MarshalText()
		require.NoError(t, err)
		var back Status
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, st, back)
	}
	for _, m := range []StartMode{StartResume, StartNow, StartAt} {
		b, err := m.MarshalText()
		require.NoError(t, err)
		var back StartMode
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, m, back)
	}
	_, err := Placement(4).MarshalText()
	require.Error(t, err)
	_, err = Pace(2).MarshalText()
	require.Error(t, err)
	_, err = Status(2).MarshalText()
	require.Error(t, err)
	_, err = StartMode(3).MarshalText()
	require.Error(t, err)
	require.Equal(t, "StartMode(3)", StartMode(3).String())
	var p Placement
	require.Error(t, p.UnmarshalText([]byte("neutral")))
}

// FuzzDecodeCommand decodes arbitrary bytes in either format: decoding
// never panics, a decodable command is stable under encode and decode, a
// binary input is canonical (it re-encodes to itself), and the JSON and
// binary encodings of every decodable command decode to the same command.
func FuzzDecodeCommand(f *testing.F) {
	for _, c := range append(validCommands(), restoreCommands()...) {
		b, err := EncodeCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		j, err := json.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(j)
	}
	f.Add([]byte(`{"op":"stop","stop":{"domain":"x"}} {}`))
	f.Add([]byte(`{"OP":"stop","Stop":{"Domain":"x"}}`))
	f.Add([]byte(`{"op":"stop","stop":{"domain":"x"},"stop":{"domain":"y"}}`))
	for _, c := range withRequestIDs(validCommands()) {
		b, err := EncodeCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{formatBinaryV1, 5, 1, 'x', 0})
	f.Add([]byte{formatBinaryV1, 6, 1, 'x', 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{formatBinaryV2, 0, 5, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecoded(t, b)
	})
}

// FuzzDecodeBinaryCommand explores the binary format only: every input is
// prefixed with the binary format byte.
func FuzzDecodeBinaryCommand(f *testing.F) {
	for _, c := range append(validCommands(), restoreCommands()...) {
		b, err := EncodeCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[1:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecoded(t, append([]byte{formatBinaryV1}, b...))
	})
}

// usedDecoder returns a CommandDecoder that has decoded a command of every
// op (authorities included) into its reused payloads.
func usedDecoder(t *testing.T) *CommandDecoder {
	var dec CommandDecoder
	for _, c := range append(validCommands(), restoreCommands()...) {
		b, err := EncodeCommand(c)
		require.NoError(t, err)
		_, err = dec.Decode(b)
		require.NoError(t, err)
	}
	return &dec
}

func checkDecoded(t *testing.T, b []byte) {
	c, err := DecodeCommand(b)
	// The reusing decoder agrees with DecodeCommand whatever it decoded
	// before, refusals included.
	reused, reusedErr := usedDecoder(t).Decode(b)
	require.Equal(t, err, reusedErr)
	require.Equal(t, c, reused)
	if err != nil {
		require.ErrorIs(t, err, ErrInvalidCommand)
		return
	}
	enc, err := EncodeCommand(c)
	require.NoError(t, err)
	if b[0] == formatBinaryV1 || b[0] == formatBinaryV2 {
		require.Equal(t, b, enc, "binary decoding is canonical")
	}
	back, err := DecodeCommand(enc)
	require.NoError(t, err)
	enc2, err := EncodeCommand(back)
	require.NoError(t, err)
	require.Equal(t, enc, enc2)
	require.Equal(t, normalized(c), normalized(back))

	// The JSON form of earlier builds decodes to the same command.
	j, err := json.Marshal(c)
	require.NoError(t, err)
	fromJSON, err := DecodeCommand(j)
	require.NoError(t, err)
	require.Equal(t, normalized(c), normalized(fromJSON))

	// Applying any decodable command to a populated state never panics
	// and either changes the revision by one or leaves it.
	s := NewState()
	for _, seed := range validCommands() {
		s.Apply(seed)
	}
	rev := s.Revision()
	r := s.Apply(back)
	if r.Changed {
		require.Equal(t, rev+1, s.Revision())
	} else {
		require.Equal(t, rev, s.Revision())
	}
}

// normalized returns c with an empty transaction step list as nil: JSON
// tells [] from null, the binary form does not, and both apply alike.
func normalized(c Command) Command {
	if c.Transaction != nil && len(c.Transaction.Steps) == 0 {
		t := *c.Transaction
		t.Steps = nil
		c.Transaction = &t
	}
	return c
}
