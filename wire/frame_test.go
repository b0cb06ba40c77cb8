package wire

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
)

// TestFrameString: every frame kind prints as the one line nspl clock
// prints for it, the domain written as NSPL writes names.
func TestFrameString(t *testing.T) {
	const t0 = int64(1767225600e9) // 2026-01-01T00:00:00Z
	paced := clock.Observed{Generation: 2, State: clock.Paced, Period: 1e9, Skew: 1e8, LogicalStart: t0, WallStartedAt: t0 + 5e8, Rate: 60}
	failure := ClockFailure{Domain: "prod", Generation: 2, Op: "project", Message: "domain clock projection falls outside the signed Unix-nanosecond range"}
	for _, tc := range []struct {
		f    Frame
		want string
	}{
		{Frame{Domain: "prod", Kind: FrameState, Clock: paced},
			"clock prod generation 2 paced period 1s skew 100ms origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00.5Z rate 60"},
		{Frame{Domain: "prod", Kind: FrameState, Clock: clock.Observed{Generation: 3, State: clock.Stopped}}, "clock prod generation 3 stopped"},
		{Frame{Domain: "prod-1", Kind: FrameTick, Tick: Tick{Generation: 2, ID: 17, Boundary: t0 + 16e9, AuthorityUTC: t0 + 1}, Reading: t0 + 16e9 + 5e8},
			"tick `prod-1` generation 2 id 17 boundary 2026-01-01T00:00:16Z authority_utc 2026-01-01T00:00:00.000000001Z reading 2026-01-01T00:00:16.5Z"},
		{Frame{Domain: "clock", Kind: FrameEnd, Reason: DomainRemoved}, "end `clock` DomainRemoved"},
		{Frame{Domain: "prod", Kind: FrameEnd, Reason: NodeShutdown}, "end prod NodeShutdown"},
		{Frame{Domain: "prod", Kind: FrameError, Failure: failure},
			`error prod generation 2 op "project": domain clock projection falls outside the signed Unix-nanosecond range`},
		{Frame{Domain: "prod", Kind: FrameInterrupted, Failure: ClockFailure{Generation: 2, Message: "the serving node lost contact with the cluster's leader"}},
			"interrupted prod generation 2: the serving node lost contact with the cluster's leader"},
		{Frame{Domain: "prod", Kind: FrameKind(99)}, "frame(99) prod"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.f.String())
		})
	}
}
