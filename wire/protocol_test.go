package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

var paced = clock.Observed{Generation: 2, State: clock.Paced, Period: 1e9, Skew: 1e8, LogicalStart: -5, WallStartedAt: math.MaxInt64, Rate: 5e-324}

var frameCases = []wire.Frame{
	{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: paced},
	{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: clock.Observed{Generation: 0, State: clock.Uninstalled}},
	{Domain: "prod", Attachment: 1, Kind: wire.FrameState, Clock: clock.Observed{Generation: 7, State: clock.Stopped}},
	{Domain: "u", Attachment: math.MaxUint64, Kind: wire.FrameState, Clock: clock.Observed{Generation: 1, State: clock.Unpaced}},
	{Domain: "prod", Attachment: 3, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 2, ID: 1, Boundary: math.MinInt64, AuthorityUTC: math.MaxInt64}, Reading: -1},
	{Domain: "prod", Attachment: 3, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: math.MaxUint64, ID: math.MaxUint64}},
	{Domain: "x-1", Attachment: 9, Kind: wire.FrameEnd, Reason: wire.DomainRemoved},
	{Domain: "prod", Attachment: 4, Kind: wire.FrameError, Failure: wire.ClockFailure{
		Domain: "prod", Generation: 2, Op: "project", Code: "clock_overflow",
		Cause:   "clock: project: result of \"quoted\"\nleaves signed unix nanoseconds",
		Message: "produce domain \"prod\" generation 2: domain clock projection falls outside the signed Unix-nanosecond range"}},
	{Domain: "p", Attachment: 1, Kind: wire.FrameError, Failure: wire.ClockFailure{Domain: "p", Generation: math.MaxUint64, Message: "m"}},
	{Domain: "prod", Attachment: 5, Kind: wire.FrameInterrupted, Failure: wire.ClockFailure{
		Domain: "prod", Generation: 3, Op: "authority lease", Code: "clock_interrupted",
		Cause: "no contact with the leader for 1.2s", Message: "node n3 cannot vouch for the clock"}},
}

func TestFrameRoundTrip(t *testing.T) {
	for _, f := range frameCases {
		t.Run(f.String(), func(t *testing.T) {
			got, err := wire.DecodeFrame(f.AppendJSON(nil))
			require.NoError(t, err)
			require.Equal(t, f, got)
		})
	}
}

func TestDecodeFrameRefusals(t *testing.T) {
	for _, tt := range []string{
		``, `{}`, `[]`, `{"domain":"p","attachment":1,"kind":"nope"}`,
		`{"domain":"","attachment":1,"kind":"end","reason":"DomainRemoved"}`,
		`{"domain":"p","attachment":1,"kind":"end","reason":"Other"}`,
		`{"domain":"p","attachment":1,"kind":"tick","generation":1,"tick":0}`,
		`{"domain":"p","attachment":1,"kind":"state","clock":{"generation":1,"state":"paced","period_ns":0,"time_rate":1}}`,
		`{"domain":"p","attachment":1,"kind":"state","clock":{"generation":1,"state":"paced","period_ns":1}}`,
		`{"domain":"p","attachment":1,"kind":"state","clock":{"generation":1,"state":"paced","period_ns":1,"time_rate":-1}}`,
		`{"domain":"p","attachment":1,"kind":"state","clock":{"generation":1,"state":"odd"}}`,
		`{"domain":"p","attachment":-1,"kind":"end","reason":"DomainRemoved"}`,
		`{"domain":"p","attachment":1,"kind":"end","reason":"DomainRemoved","extra":1}`,
		`{"domain":"p","attachment":1,"kind":"interrupted","generation":1,"message":""}`,
		`{"domain":"p","attachment":1,"kind":"end","reason":"DomainRemoved"} {}`,
		`{"domain":"p","attachment":1,"kind":"end","reason":"DomainRemoved"}]`,
		`{"domain":"p","attachment":1,"kind":"end","reason":"DomainRemoved"}}`,
		`{"domain":"p","attachment":1,"kind":"error","generation":1,"op":"project","code":"clock_overflow","cause":"c"}`,
		`{"domain":"p","attachment":1,"kind":"error","generation":1,"message":""}`,
		`{"domain":"p","attachment":1,"kind":"error","generation":-1,"message":"m"}`,
		`{"domain":"p","attachment":1,"kind":"error","generation":1,"message":1}`,
	} {
		_, err := wire.DecodeFrame([]byte(tt))
		require.ErrorIs(t, err, wire.ErrProtocol, tt)
	}
}

func setCase() *wire.ResultSet {
	return &wire.ResultSet{
		Columns: []wire.Column{
			{Name: "name", Type: wire.KindText}, {Name: "n", Type: wire.KindUint},
			{Name: "period", Type: wire.KindDuration}, {Name: "at", Type: wire.KindTimestamp},
			{Name: "rate", Type: wire.KindRate}, {Name: "nothing", Type: wire.KindNull},
		},
		Rows: [][]wire.Value{
			{wire.Text("a \"quoted\"\nname"), wire.Uint(math.MaxUint64), wire.Duration(math.MaxUint64), wire.Timestamp(math.MinInt64), wire.Rate(math.MaxFloat64), wire.Null()},
			{wire.Null(), wire.Uint(0), wire.Duration(1), wire.Timestamp(math.MaxInt64), wire.Rate(5e-324), wire.Null()},
			{wire.Text(""), wire.Null(), wire.Null(), wire.Null(), wire.Rate(0.1), wire.Null()},
		},
	}
}

func TestResultRoundTrip(t *testing.T) {
	c := paced
	for _, r := range []wire.Result{
		{Statement: "LIST DOMAINS;", Message: "3 domains", Set: setCase()},
		{Statement: "ATTACH DOMAIN CLOCK;", Message: "attached", Domain: "prod", Clock: &c, Attachment: 4},
		{Statement: "USE prod;", Message: "using domain 'prod'", Domain: "prod"},
		{Statement: "LIST DOMAINS;", Message: "0 domains", Set: &wire.ResultSet{Columns: []wire.Column{{Name: "name", Type: wire.KindText}}}},
	} {
		got, err := wire.DecodeResult(wire.EncodeResult(r))
		require.NoError(t, err)
		if r.Set != nil && r.Set.Rows == nil {
			r.Set.Rows = [][]wire.Value{}
		}
		require.Equal(t, r, got)
	}
}

func TestDecodeSetRefusals(t *testing.T) {
	for _, tt := range []*wire.EncodedSet{
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "blob"}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "uint"}}, Rows: [][]jsonRaw{{jsonRaw("-1")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "uint"}}, Rows: [][]jsonRaw{{jsonRaw("18446744073709551616")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "timestamp"}}, Rows: [][]jsonRaw{{jsonRaw("9223372036854775808")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "rate"}}, Rows: [][]jsonRaw{{jsonRaw("0")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "rate"}}, Rows: [][]jsonRaw{{jsonRaw("1e309")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "text"}}, Rows: [][]jsonRaw{{jsonRaw("1")}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "null"}}, Rows: [][]jsonRaw{{jsonRaw(`"x"`)}}},
		{Columns: []wire.EncodedColumn{{Name: "a", Type: "text"}}, Rows: [][]jsonRaw{{}}},
	} {
		_, err := wire.DecodeSet(tt)
		require.ErrorIs(t, err, wire.ErrProtocol)
	}
}

func TestLineReaderLimit(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
		err   error
	}{
		{name: "lines and blanks", in: "a\n\n  \nbb\r\n", limit: 2, want: []string{"a", "bb"}, err: io.EOF},
		{name: "at the limit", in: strings.Repeat("x", 8) + "\n", limit: 8, want: []string{strings.Repeat("x", 8)}, err: io.EOF},
		{name: "one past the limit", in: strings.Repeat("x", 9) + "\n", limit: 8, err: wire.ErrMessageTooLarge},
		{name: "past the buffer", in: strings.Repeat("y", 200<<10) + "\n", limit: 100 << 10, err: wire.ErrMessageTooLarge},
		{name: "long within the limit", in: strings.Repeat("y", 200<<10) + "\n", limit: 300 << 10, want: []string{strings.Repeat("y", 200<<10)}, err: io.EOF},
		{name: "unterminated", in: "abc", limit: 8, err: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := wire.NewLineReader(strings.NewReader(tt.in), tt.limit)
			var got []string
			for {
				l, err := lr.Next()
				if err != nil {
					require.ErrorIs(t, err, tt.err)
					break
				}
				got = append(got, string(l))
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, fr := range frameCases {
		f.Add(fr.AppendJSON(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := wire.DecodeFrame(b)
		if err != nil {
			return
		}
		again, err := wire.DecodeFrame(fr.AppendJSON(nil))
		if err != nil {
			t.Fatalf("a decoded frame does not decode again: %v", err)
		}
		if again != fr {
			t.Fatalf("round trip changed the frame: %v != %v", again, fr)
		}
	})
}

func FuzzDecodeSet(f *testing.F) {
	w := wire.EncodeSet(setCase())
	for i := range w.Rows {
		for j := range w.Rows[i] {
			f.Add(w.Columns[j].Type, []byte(w.Rows[i][j]))
		}
	}
	f.Fuzz(func(t *testing.T, typ string, raw []byte) {
		set, err := wire.DecodeSet(&wire.EncodedSet{Columns: []wire.EncodedColumn{{Name: "c", Type: typ}}, Rows: [][]jsonRaw{{jsonRaw(raw)}}})
		if err != nil {
			return
		}
		again, err := wire.DecodeSet(wire.EncodeSet(set))
		if err != nil {
			t.Fatalf("a decoded set does not decode again: %v", err)
		}
		if fmt.Sprint(again) != fmt.Sprint(set) {
			t.Fatalf("round trip changed the set: %v != %v", again, set)
		}
	})
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\n"), 4)
	f.Add([]byte("toolong\n"), 3)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 1<<16 {
			return
		}
		lr := wire.NewLineReader(bytes.NewReader(in), limit)
		for {
			l, err := lr.Next()
			if err != nil {
				return
			}
			if len(l) > limit {
				t.Fatalf("line of %d bytes over the limit %d", len(l), limit)
			}
		}
	})
}

type jsonRaw = json.RawMessage

func TestClockFailureUnwrapsToItsCode(t *testing.T) {
	tests := []struct {
		name string
		code string
		want error
	}{
		{name: "registered code", code: "protocol", want: wire.ErrProtocol},
		{name: "unknown code", code: "no_such_code", want: wire.ErrRemote},
		{name: "no code", code: "", want: wire.ErrRemote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &wire.ClockFailure{Domain: "d", Generation: 1, Op: "project", Code: tt.code, Message: "the report"}
			require.ErrorIs(t, f, tt.want)
			require.EqualError(t, f, "the report")
		})
	}
}
