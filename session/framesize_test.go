package session

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

// TestFrameSize holds the measured size of every frame, the tick frames
// measured without encoding among them, to the length of its encoding.
func TestFrameSize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		domain string
		id     uint64
		f      func(domain string, id uint64) wire.Frame
	}{
		{"tick zero", "prod", 1, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameTick}
		}},
		{"tick extremes", "p-1", math.MaxUint64, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: math.MaxUint64, ID: math.MaxUint64,
				Boundary: math.MinInt64, AuthorityUTC: math.MaxInt64}, Reading: math.MinInt64}
		}},
		{"tick digit boundaries", "a", 10, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 9, ID: 10,
				Boundary: -9, AuthorityUTC: -10}, Reading: 99}
		}},
		{"tick typical", "orders_eu", 7, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 3, ID: 86400,
				Boundary: t0 + 86400e9, AuthorityUTC: t0 + 86400e9 + 17}, Reading: t0 + 86400e9 + 512}
		}},
		{"tick with an escaped name", "\"q\"\x01é", 2, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 1, ID: 1}}
		}},
		{"tick of another attachment", "prod", 1, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: "other", Attachment: id + 1, Kind: wire.FrameTick, Tick: clockrt.Tick{Generation: 1, ID: 123456}}
		}},
		{"paced state", "prod", 4, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameState, Clock: clock.Observed{Generation: 2, State: clock.Paced,
				Period: 1e9, Skew: 5, LogicalStart: -1, WallStartedAt: t0, Rate: 0.1}}
		}},
		{"end", "prod", 4, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameEnd, Reason: wire.DomainRemoved}
		}},
		{"error", "prod", 4, func(d string, id uint64) wire.Frame {
			return wire.Frame{Domain: d, Attachment: id, Kind: wire.FrameError, Failure: wire.ClockFailure{Domain: d, Generation: 2,
				Op: "now", Code: "clock_unavailable", Cause: "x", Message: "a \"quoted\" message over the scratch buffer " + string(make([]byte, 300))}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &attachment{domain: tc.domain, id: tc.id, tickBase: int32(tickFrameBase(tc.domain, tc.id))}
			f := tc.f(tc.domain, tc.id)
			require.Equal(t, len(f.AppendJSON(nil)), a.frameSize(f))
		})
	}
}
