package follow

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/wire"
)

func TestFrameJSON(t *testing.T) {
	for _, tc := range []struct {
		f    wire.Frame
		want string
	}{
		{wire.Frame{Domain: "prod", Attachment: 3, Kind: wire.FrameState, Clock: clock.Observed{Generation: 2, State: clock.Uninstalled}},
			`{"domain":"prod","attachment":3,"kind":"state","clock":{"generation":2,"state":"uninstalled"}}`},
		{wire.Frame{Domain: "prod", Attachment: 3, Kind: wire.FrameState, Clock: clock.Observed{Generation: 2, State: clock.Paced,
			Period: 1e9, Skew: 5, LogicalStart: -1, WallStartedAt: 7, Rate: 5e-324}},
			`{"domain":"prod","attachment":3,"kind":"state","clock":{"generation":2,"state":"paced","period_ns":1000000000,` +
				`"skew_ns":5,"logical_start_ns":-1,"wall_started_at_ns":7,"time_rate":5e-324}}`},
		{wire.Frame{Domain: "p-1", Attachment: 1, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 18446744073709551615,
			Boundary: -9223372036854775808, AuthorityUTC: 9223372036854775807}, Reading: 0},
			`{"domain":"p-1","attachment":1,"kind":"tick","generation":1,"tick":18446744073709551615,` +
				`"boundary_ns":-9223372036854775808,"authority_utc_ns":9223372036854775807,"reading_ns":0}`},
		{wire.Frame{Domain: "x", Kind: wire.FrameEnd, Reason: wire.DomainRemoved}, `{"domain":"x","attachment":0,"kind":"end","reason":"DomainRemoved"}`},
	} {
		got := string(tc.f.AppendJSON(nil))
		require.Equal(t, tc.want, got)
		require.True(t, json.Valid([]byte(got)))
	}
	require.Equal(t, "tick prod generation 1 id 2 boundary 2026-01-01T00:00:01Z authority_utc 2026-01-01T00:00:01Z reading 2026-01-01T00:00:02Z",
		wire.Frame{Domain: "prod", Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 2, Boundary: t0 + 1e9, AuthorityUTC: t0 + 1e9},
			Reading: t0 + 2e9}.String())
	require.Equal(t, "end prod DomainRemoved", wire.Frame{Domain: "prod", Kind: wire.FrameEnd, Reason: wire.DomainRemoved}.String())
}

func TestValueText(t *testing.T) {
	for _, tc := range []struct {
		v          wire.Value
		text, json string
	}{
		{wire.Null(), "NULL", "null"},
		{wire.Text("a\"b\x01é"), "a\"b\x01é", `"a\"b\u0001é"`},
		{wire.Uint(18446744073709551615), "18446744073709551615", "18446744073709551615"},
		{wire.Duration(1500 * 1e6), "1.5s", `"1.5s"`},
		{wire.Timestamp(t0), "2026-01-01T00:00:00Z", `"2026-01-01T00:00:00Z"`},
		{wire.Rate(60), "60", "60"},
		{wire.Rate(1.7976931348623157e308), "1.7976931348623157e+308", "1.7976931348623157e+308"},
	} {
		require.Equal(t, tc.text, tc.v.String())
		require.Equal(t, tc.json, string(AppendValueJSON(nil, tc.v)))
		require.True(t, json.Valid(AppendValueJSON(nil, tc.v)))
	}
}

// TestClockEventString: every event kind prints as the shell's line for
// it, which the shell prints (escaped) and an embedding program may print
// as is.
func TestClockEventString(t *testing.T) {
	paced := clock.Observed{Generation: 1, State: clock.Paced, Period: 1e8, Skew: 1e7, LogicalStart: t0, WallStartedAt: t0, Rate: 60}
	failure := &wire.ClockFailure{Domain: "prod", Generation: 1, Op: "project", Message: `produce domain "prod" generation 1: domain clock projection falls outside the signed Unix-nanosecond range`}
	for _, tc := range []struct {
		ev   ClockEvent
		want string
	}{
		{ClockEvent{Domain: "prod", Kind: EventTick, Clock: Clock{Observed: paced, Tick: Tick{Generation: 1, ID: 42, Boundary: t0 + 41e8 + 1}}},
			"[clock prod] tick 42 at 2026-01-01T00:00:04.100000001Z (generation 1)"},
		{ClockEvent{Domain: "prod", Kind: EventState, Clock: Clock{Observed: paced}},
			"[clock prod] generation 1 paced period 100ms skew 10ms origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 60"},
		{ClockEvent{Domain: "prod-1", Kind: EventState, Clock: Clock{Observed: clock.Observed{Generation: 2, State: clock.Stopped}}},
			"[clock `prod-1`] generation 2 stopped"},
		{ClockEvent{Domain: "clock", Kind: EventEnd, Reason: wire.DomainRemoved}, "[clock `clock`] ended: DomainRemoved"},
		{ClockEvent{Domain: "prod", Kind: EventError, Failure: failure},
			`[clock prod] error: produce domain "prod" generation 1: domain clock projection falls outside the signed Unix-nanosecond range`},
		{ClockEvent{Domain: "prod", Kind: EventError}, "[clock prod] error"},
		{ClockEvent{Domain: "prod", Kind: EventInterrupted, Failure: &wire.ClockFailure{Message: "the serving node lost contact with the cluster's leader"}},
			"[clock prod] interrupted: the serving node lost contact with the cluster's leader"},
		{ClockEvent{Domain: "prod", Kind: EventInterrupted}, "[clock prod] interrupted"},
		{ClockEvent{Domain: "prod", Kind: EventKind(99)}, "[clock prod] frame(0) prod"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.ev.String())
			require.Equal(t, tc.want, fmt.Sprint(tc.ev))
		})
	}
}

// TestFormatEventLine: the shell's line of each frame kind, which the
// console's statement box prints too.
func TestFormatEventLine(t *testing.T) {
	t0 := int64(1767225600e9) // 2026-01-01T00:00:00Z
	for _, tc := range []struct {
		f    wire.Frame
		want string
	}{
		{wire.Frame{Domain: "prod", Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 42, Boundary: t0 + 4e9 + 1e8}},
			"[clock prod] tick 42 at 2026-01-01T00:00:04.1Z (generation 1)"},
		{wire.Frame{Domain: "prod", Kind: wire.FrameState, Clock: clock.Observed{Generation: 2, State: clock.Stopped}},
			"[clock prod] generation 2 stopped"},
		{wire.Frame{Domain: "my domain", Kind: wire.FrameEnd, Reason: wire.DomainRemoved}, "[clock `my domain`] ended: DomainRemoved"},
		{wire.Frame{Domain: "prod", Kind: wire.FrameError, Failure: wire.ClockFailure{Message: "it broke"}}, "[clock prod] error: it broke"},
		{wire.Frame{Domain: "prod", Kind: wire.FrameError}, "[clock prod] error"},
		{wire.Frame{Domain: "prod", Kind: wire.FrameInterrupted, Failure: wire.ClockFailure{Message: "no leader"}}, "[clock prod] interrupted: no leader"},
		{wire.Frame{Domain: "prod", Kind: wire.FrameInterrupted}, "[clock prod] interrupted"},
	} {
		require.Equal(t, tc.want, FormatEventLine(tc.f))
	}
}
