package follow

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/wire"
)

func paced(gen uint64) clock.Observed {
	return clock.Observed{Generation: gen, State: clock.Paced, Period: 1e9, LogicalStart: t0, WallStartedAt: t0, Rate: 1}
}

// Events coalesce per domain: a newer state replaces an unread state and
// drops the unread tick received before it; a newer tick replaces an unread
// tick; an end replaces everything. Frames of a released attachment are
// ignored.
func TestFollowCoalescesPerDomain(t *testing.T) {
	s := NewFollow(wire.ErrClosed)
	s.Attached("a", 1, paced(1))
	s.Attached("b", 7, clock.Observed{State: clock.Stopped})
	s.Attached("c", 3, paced(1))
	tick := func(d string, att, gen, id uint64) wire.Frame {
		return wire.Frame{Domain: d, Attachment: att, Kind: wire.FrameTick,
			Tick: Tick{Generation: gen, ID: id, Boundary: t0 + int64(id-1)*1e9}, Reading: t0 + int64(id)*1e9}
	}
	state := func(d string, att uint64, o clock.Observed) wire.Frame {
		return wire.Frame{Domain: d, Attachment: att, Kind: wire.FrameState, Clock: o}
	}
	for _, f := range []wire.Frame{
		tick("a", 1, 1, 1),
		tick("a", 1, 1, 4),
		state("b", 7, paced(1)),
		tick("a", 1, 1, 3), // older than the newest: ignored
		tick("a", 9, 1, 9), // another attachment: ignored
		state("a", 1, clock.Observed{Generation: 1, State: clock.Stopped}),
		state("a", 1, paced(2)),
		tick("a", 1, 1, 5), // an earlier generation than the newest state: ignored
		tick("a", 1, 2, 2),
		tick("b", 7, 1, 1),
		tick("b", 7, 1, 2),
		tick("c", 3, 1, 1), // unread when a newer state comes, and no tick after it
		state("c", 3, paced(2)),
	} {
		s.Apply(f)
	}
	c, ok := s.Clock("a")
	require.True(t, ok)
	require.Equal(t, Clock{Domain: "a", Observed: paced(2), Tick: Tick{Generation: 2, ID: 2, Boundary: t0 + 1e9}, Reading: t0 + 2e9}, c)

	var got []string
	for len(s.queue) > 0 {
		ev, err := s.NextEvent(context.Background())
		require.NoError(t, err)
		got = append(got, ev.Domain+" "+ev.Kind.String()+" "+wire.FormatObserved(ev.Clock.Observed)+" tick "+
			strconv.FormatUint(ev.Clock.Tick.ID, 10))
	}
	require.Equal(t, []string{
		"a state generation 2 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 0",
		"a tick generation 2 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 2",
		"b state generation 1 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 0",
		"b tick generation 1 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 2",
		"c state generation 2 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1 tick 0",
	}, got)

	// An end replaces the unread state and tick and ends the following.
	s.Apply(state("a", 1, paced(3)))
	s.Apply(tick("a", 1, 3, 1))
	s.Apply(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.DomainRemoved})
	ev, err := s.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, EventEnd, ev.Kind)
	require.Equal(t, wire.DomainRemoved, ev.Reason)
	_, ok = s.Clock("a")
	require.False(t, ok)
	require.Empty(t, s.queue)
}

// A clock attached again after an interruption keeps its newest tick, so the
// same tick delivered anew by the new attachment is no event; a newer one is.
func TestFollowReattachedKeepsNewestTick(t *testing.T) {
	f := NewFollow(wire.ErrClosed)
	f.Attached("a", 1, paced(1))
	tick := func(att, id uint64) wire.Frame {
		return wire.Frame{Domain: "a", Attachment: att, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: id}}
	}
	f.Apply(tick(1, 3))
	ev, err := f.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, EventTick, ev.Kind)

	f.Reattached("a", 2, paced(1))
	f.Apply(tick(1, 4)) // the interrupted attachment: ignored
	f.Apply(tick(2, 3)) // delivered anew: no event
	var got []string
	for len(f.queue) > 0 {
		ev, err := f.NextEvent(context.Background())
		require.NoError(t, err)
		got = append(got, ev.Kind.String()+" "+strconv.FormatUint(ev.Clock.Tick.ID, 10))
	}
	require.Equal(t, []string{"state 3"}, got)
	f.Apply(tick(2, 4))
	ev, err = f.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, "tick 4", ev.Kind.String()+" "+strconv.FormatUint(ev.Clock.Tick.ID, 10))

	f.Close()
	_, err = f.NextEvent(context.Background())
	require.ErrorIs(t, err, wire.ErrClosed)
}

func TestTickAdvances(t *testing.T) {
	for _, tc := range []struct {
		name      string
		last, t   Tick
		advancing bool
	}{
		{"first tick", Tick{}, Tick{Generation: 1, ID: 1}, true},
		{"next id", Tick{Generation: 1, ID: 1}, Tick{Generation: 1, ID: 2}, true},
		{"same tick anew", Tick{Generation: 1, ID: 2}, Tick{Generation: 1, ID: 2}, false},
		{"older id", Tick{Generation: 1, ID: 2}, Tick{Generation: 1, ID: 1}, false},
		{"later generation, lower id", Tick{Generation: 1, ID: 9}, Tick{Generation: 2, ID: 1}, true},
		{"earlier generation", Tick{Generation: 2, ID: 1}, Tick{Generation: 1, ID: 9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.advancing, TickAdvances(tc.last, tc.t))
		})
	}
}

// An interruption's end is an event but keeps the clock followed, and the
// state of the clock attached again comes after that end, not before it.
func TestFollowInterruptedEndComesBeforeTheRestoredState(t *testing.T) {
	f := NewFollow(wire.ErrClosed)
	f.Attached("a", 1, paced(1))
	f.Apply(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 3}})
	f.Interrupted(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.NodeShutdown})
	c, ok := f.Clock("a")
	require.True(t, ok, "an interrupted clock is still followed")
	require.Equal(t, uint64(3), c.Tick.ID)

	f.Reattached("a", 2, paced(1))
	f.Apply(wire.Frame{Domain: "a", Attachment: 2, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 5}})
	require.Equal(t, 3, f.Pending())
	var got []string
	for f.Pending() > 0 {
		ev, err := f.NextEvent(context.Background())
		require.NoError(t, err)
		got = append(got, ev.Frame().String())
	}
	require.Equal(t, []string{
		"end a NodeShutdown",
		"clock a generation 1 paced period 1s skew 0s origin 2026-01-01T00:00:00Z anchor 2026-01-01T00:00:00Z rate 1",
		"tick a generation 1 id 5 boundary 1970-01-01T00:00:00Z authority_utc 1970-01-01T00:00:00Z reading 1970-01-01T00:00:00Z",
	}, got)
	require.Empty(t, f.queue)
}

// An event's frame is the frame it reports.
func TestClockEventFrame(t *testing.T) {
	tick := Tick{Generation: 2, ID: 7, Boundary: t0, AuthorityUTC: t0 + 5}
	for _, fr := range []wire.Frame{
		{Domain: "a", Attachment: 3, Kind: wire.FrameState, Clock: paced(2)},
		{Domain: "a", Attachment: 3, Kind: wire.FrameTick, Tick: tick, Reading: t0 + 9},
		{Domain: "a", Attachment: 3, Kind: wire.FrameEnd, Reason: wire.DomainRemoved},
		{Domain: "a", Attachment: 3, Kind: wire.FrameInterrupted, Failure: wire.ClockFailure{
			Domain: "a", Generation: 2, Op: "authority lease", Code: "clock_interrupted", Cause: "c", Message: "m"}},
	} {
		t.Run(fr.Kind.String(), func(t *testing.T) {
			f := NewFollow(wire.ErrClosed)
			f.Attached("a", 3, paced(2))
			f.Apply(fr)
			ev, err := f.NextEvent(context.Background())
			require.NoError(t, err)
			require.Equal(t, fr, ev.Frame())
		})
	}
}

// An end reported for an interrupted attachment (its restoration refused as
// not found) ends the following, replacing the unread interruption as an
// end replaces every unread event before it.
func TestFollowInterruptedThenRemoved(t *testing.T) {
	f := NewFollow(wire.ErrClosed)
	f.Attached("a", 1, paced(1))
	f.Interrupted(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.NodeShutdown})
	f.Apply(wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.DomainRemoved})
	_, ok := f.Clock("a")
	require.False(t, ok)
	var got []string
	for f.Pending() > 0 {
		ev, err := f.NextEvent(context.Background())
		require.NoError(t, err)
		got = append(got, ev.Frame().String())
	}
	require.Equal(t, []string{"end a DomainRemoved"}, got)
}

// An error frame of the followed generation is one error event carrying the
// typed failure, after the tick received before it; the clock keeps the
// failure until a state of another generation. A failure of another
// generation, or one delivered anew after a reattach, is no event.
func TestFollowClockFailure(t *testing.T) {
	failure := wire.ClockFailure{Domain: "a", Generation: 1, Op: "project", Code: "clock_overflow",
		Cause: "clock: project: …", Message: "produce domain \"a\" generation 1: domain clock projection falls outside the signed Unix-nanosecond range"}
	errFrame := func(att uint64, fl wire.ClockFailure) wire.Frame {
		return wire.Frame{Domain: "a", Attachment: att, Kind: wire.FrameError, Failure: fl}
	}
	other := failure
	other.Generation = 2
	tests := []struct {
		name   string
		frames []wire.Frame
		kinds  []EventKind
		failed bool // the followed clock holds the failure at the end
	}{
		{name: "tick then failure", frames: []wire.Frame{
			{Domain: "a", Attachment: 1, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: 1}},
			errFrame(1, failure),
		}, kinds: []EventKind{EventTick, EventError}, failed: true},
		{name: "another generation's failure", frames: []wire.Frame{errFrame(1, other)}},
		{name: "another attachment's failure", frames: []wire.Frame{errFrame(2, failure)}},
		{name: "the same failure again", frames: []wire.Frame{errFrame(1, failure), errFrame(1, failure)},
			kinds: []EventKind{EventError}, failed: true},
		{name: "a new generation clears it", frames: []wire.Frame{
			errFrame(1, failure),
			{Domain: "a", Attachment: 1, Kind: wire.FrameState, Clock: paced(2)},
		}, kinds: []EventKind{EventState}},
		{name: "a state of the generation keeps it", frames: []wire.Frame{
			errFrame(1, failure),
			{Domain: "a", Attachment: 1, Kind: wire.FrameState, Clock: clock.Observed{Generation: 1, State: clock.Uninstalled}},
		}, kinds: []EventKind{EventState}, failed: true},
		{name: "an end replaces it", frames: []wire.Frame{
			errFrame(1, failure),
			{Domain: "a", Attachment: 1, Kind: wire.FrameEnd, Reason: wire.DomainRemoved},
		}, kinds: []EventKind{EventEnd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewFollow(wire.ErrClosed)
			s.Attached("a", 1, paced(1))
			for _, f := range tt.frames {
				s.Apply(f)
			}
			var kinds []EventKind
			for len(s.queue) > 0 {
				ev, err := s.NextEvent(context.Background())
				require.NoError(t, err)
				kinds = append(kinds, ev.Kind)
				if ev.Kind == EventError {
					require.Equal(t, &failure, ev.Failure)
					require.Equal(t, &failure, ev.Clock.Failure)
					require.ErrorIs(t, ev.Failure, clockrt.ErrClockOverflow, "typed through its code")
				} else {
					require.Nil(t, ev.Failure)
				}
			}
			require.Equal(t, tt.kinds, kinds)
			c, ok := s.Clock("a")
			if tt.failed {
				require.True(t, ok)
				require.Equal(t, &failure, c.Failure)
			} else if ok {
				require.Nil(t, c.Failure)
			}
		})
	}

	// Reattached after a lost transport, the failure delivered anew is no
	// second event.
	s := NewFollow(wire.ErrClosed)
	s.Attached("a", 1, paced(1))
	s.Apply(errFrame(1, failure))
	ev, err := s.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, EventError, ev.Kind)
	s.Reattached("a", 2, paced(1))
	s.Apply(errFrame(2, failure))
	ev, err = s.NextEvent(context.Background())
	require.NoError(t, err)
	require.Equal(t, EventState, ev.Kind)
	require.Empty(t, s.queue)
}

func TestFollowInterruption(t *testing.T) {
	in := wire.ClockFailure{Domain: "a", Generation: 1, Op: "authority lease", Code: "clock_interrupted",
		Cause: "no leader", Message: "cannot vouch: no leader"}
	interrupted := wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameInterrupted, Failure: in}
	tick := func(id uint64) wire.Frame {
		return wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameTick, Tick: Tick{Generation: 1, ID: id}}
	}
	resume := wire.Frame{Domain: "a", Attachment: 1, Kind: wire.FrameState, Clock: paced(1)}
	tests := []struct {
		name   string
		frames []wire.Frame
		kinds  []EventKind
		// held: the followed clock holds the interruption at the end.
		held bool
	}{
		{"tick then interruption", []wire.Frame{tick(1), interrupted}, []EventKind{EventTick, EventInterrupted}, true},
		{"the same interruption again", []wire.Frame{interrupted, interrupted}, []EventKind{EventInterrupted}, true},
		{"a resuming state comes after the interruption", []wire.Frame{interrupted, resume},
			[]EventKind{EventInterrupted, EventState}, false},
		{"a resuming tick comes after the interruption", []wire.Frame{tick(1), interrupted, tick(2)},
			[]EventKind{EventTick, EventInterrupted, EventTick}, false},
		{"interrupted again after resuming", []wire.Frame{interrupted, resume, interrupted},
			[]EventKind{EventInterrupted, EventState, EventInterrupted}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewFollow(wire.ErrClosed)
			s.Attached("a", 1, paced(1))
			for _, f := range tt.frames {
				s.Apply(f)
			}
			var kinds []EventKind
			for len(s.queue) > 0 {
				ev, err := s.NextEvent(context.Background())
				require.NoError(t, err)
				kinds = append(kinds, ev.Kind)
				if ev.Kind == EventInterrupted {
					require.Equal(t, &in, ev.Failure)
					require.ErrorIs(t, ev.Failure, wire.ErrClockInterrupted, "typed through its code")
					require.Equal(t, wire.FrameInterrupted, ev.Frame().Kind)
				}
			}
			require.Equal(t, tt.kinds, kinds)
			c, ok := s.Clock("a")
			require.True(t, ok)
			require.Equal(t, tt.held, c.Interruption != nil)
		})
	}
}
