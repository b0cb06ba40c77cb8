package catalog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// captured returns an adapter over a JSON handler at handlerLevel and a
// function that decodes everything logged so far.
func captured(t *testing.T, handlerLevel slog.Level, level hclog.Level) (hclog.Logger, func() []map[string]any) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: handlerLevel})
	l := newRaftLogger(slog.New(h), "raft", level, nil)
	return l, func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			delete(m, "time")
			out = append(out, m)
		}
		buf.Reset()
		return out
	}
}

func TestRaftLoggerLevels(t *testing.T) {
	tests := []struct {
		level hclog.Level
		want  string
	}{
		{hclog.Trace, "DEBUG-4"},
		{hclog.Debug, "DEBUG"},
		{hclog.Info, "INFO"},
		{hclog.Warn, "WARN"},
		{hclog.Error, "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			l, read := captured(t, LevelTrace, hclog.Trace)
			l.Log(tt.level, "hello", "k", 1)
			require.Equal(t, []map[string]any{{"level": tt.want, "msg": "hello", "logger": "raft", "k": 1.0}}, read())
		})
	}
}

func TestRaftLoggerFiltering(t *testing.T) {
	// The adapter's own level and the handler's both filter.
	l, read := captured(t, slog.LevelInfo, hclog.Warn)
	l.Info("dropped by the adapter level")
	l.Debug("dropped by both")
	l.Warn("kept")
	require.Len(t, read(), 1)
	require.False(t, l.IsInfo())
	require.True(t, l.IsWarn())
	require.True(t, l.IsError())

	l.SetLevel(hclog.Debug)
	require.Equal(t, hclog.Debug, l.GetLevel())
	require.False(t, l.IsDebug(), "the handler still drops debug")
	require.True(t, l.IsInfo())
	l.Named("child").Info("kept after SetLevel on the parent")
	require.Len(t, read(), 1)

	l.SetLevel(hclog.Off)
	l.Error("off drops everything")
	require.Empty(t, read())
	l.SetLevel(hclog.NoLevel)
	l.Log(hclog.Off, "never logged")
	l.Info("no level leaves filtering to the handler")
	require.Len(t, read(), 1)
}

func TestRaftLoggerArguments(t *testing.T) {
	l, read := captured(t, LevelTrace, hclog.Trace)
	w := l.With("term", 2).Named("snap")
	w.Info("msg", "index", 7, "fmt", hclog.Fmt("%d-%s", 1, "x"), "dangling")
	require.Equal(t, []map[string]any{{
		"level": "INFO", "msg": "msg", "logger": "raft.snap", "term": 2.0,
		"index": 7.0, "fmt": "1-x", "EXTRA_VALUE_AT_END": "dangling",
	}}, read())
	require.Equal(t, "raft.snap", w.Name())
	require.Equal(t, []any{"term", 2}, w.ImpliedArgs())

	r := w.ResetNamed("other")
	r.Warn("x")
	got := read()
	require.Equal(t, "other", got[0]["logger"])
	require.Equal(t, 2.0, got[0]["term"], "ResetNamed keeps the implied arguments")

	l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error}).Print("from log")
	_, _ = l.StandardWriter(nil).Write([]byte("from writer\n"))
	got = read()
	require.Len(t, got, 2)
	require.Equal(t, "ERROR", got[0]["level"])
	require.Equal(t, "from log", got[0]["msg"])
	require.Equal(t, "INFO", got[1]["level"])
}

func TestHCLogLevelFromSlog(t *testing.T) {
	tests := []struct {
		in   slog.Level
		want hclog.Level
	}{
		{LevelTrace - 1, hclog.Trace},
		{LevelTrace, hclog.Trace},
		{LevelTrace + 1, hclog.Debug},
		{slog.LevelDebug, hclog.Debug},
		{slog.LevelDebug + 1, hclog.Info},
		{slog.LevelInfo, hclog.Info},
		{slog.LevelInfo + 1, hclog.Warn},
		{slog.LevelWarn, hclog.Warn},
		{slog.LevelWarn + 1, hclog.Error},
		{slog.LevelError, hclog.Error},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, hclogLevel(tt.in), "slog level %v", tt.in)
	}
}

func TestRaftLoggerCollapsesRepeatsPerPeer(t *testing.T) {
	var buf bytes.Buffer
	clock := timesource.NewFake(0)
	l := newRaftLogger(slog.New(slog.NewJSONHandler(&buf, nil)), "raft", hclog.Info, newRepeatLimiter(clock, repeatWindow))
	lines := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if line == "" {
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			out = append(out, m)
		}
		buf.Reset()
		return out
	}

	// The first failure about a peer is logged; repeats inside the window
	// are counted, not logged; another peer and another message are not
	// collapsed with it; a line without a peer and a line below Warn never
	// are.
	l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
	for i := 0; i < 5; i++ {
		clock.Advance(repeatWindow / 10)
		l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
	}
	l.Error("failed to heartbeat to", "peer", "n3:7000", "error", "refused")
	l.Error("failed to appendEntries to", "peer", "n2:7000", "error", "refused")
	l.Error("no peer here")
	l.Error("no peer here")
	l.Info("entering follower state", "peer", "n2:7000")
	l.Info("entering follower state", "peer", "n2:7000")
	got := lines()
	require.Len(t, got, 7)
	require.Equal(t, "n2:7000", got[0]["peer"])
	require.NotContains(t, got[0], "repeated")

	// Just inside the window since the last logged line: still collapsed.
	clock.Advance(repeatWindow - 5*(repeatWindow/10) - 1)
	l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
	require.Empty(t, lines())

	// At the window: logged again with the count of what was collapsed.
	clock.Advance(1)
	l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
	got = lines()
	require.Len(t, got, 1)
	require.Equal(t, float64(6), got[0]["repeated"])

	// The count starts again after a logged line.
	clock.Advance(repeatWindow)
	l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
	got = lines()
	require.Len(t, got, 1)
	require.NotContains(t, got[0], "repeated")
}

func TestRepeatLimiterIsBounded(t *testing.T) {
	clock := timesource.NewFake(0)
	r := newRepeatLimiter(clock, repeatWindow)
	for i := 0; i < maxRepeatKeys+10; i++ {
		ok, _ := r.allow(hclog.Error, "failed to heartbeat to", []any{"peer", i})
		require.True(t, ok, "a first occurrence is always logged")
	}
	require.LessOrEqual(t, len(r.seen), maxRepeatKeys)
	// Once the window passes, old entries make room for new ones.
	clock.Advance(repeatWindow)
	ok, _ := r.allow(hclog.Error, "failed to heartbeat to", []any{"peer", "new"})
	require.True(t, ok)
	require.Equal(t, 1, len(r.seen))
}

// TestRaftLoggerCollapsesEveryPeerKey: raft names the peer as "peer" in
// replication, "target" in elections and "server-id" in the leader's lease
// check; each is collapsed per peer, and the same address under two keys
// is two lines.
func TestRaftLoggerCollapsesEveryPeerKey(t *testing.T) {
	for _, tc := range []struct {
		level hclog.Level
		msg   string
		key   string
	}{
		{hclog.Error, "failed to heartbeat to", "peer"},
		{hclog.Error, "failed to make requestVote RPC", "target"},
		{hclog.Warn, "failed to contact", "server-id"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			var buf bytes.Buffer
			clock := timesource.NewFake(0)
			l := newRaftLogger(slog.New(slog.NewJSONHandler(&buf, nil)), "raft", hclog.Info, newRepeatLimiter(clock, repeatWindow))
			for range 20 {
				l.Log(tc.level, tc.msg, tc.key, "n2", "error", "refused")
				l.Log(tc.level, tc.msg, tc.key, "n3", "error", "refused")
				clock.Advance(500 * time.Millisecond)
			}
			require.Equal(t, 2, strings.Count(buf.String(), "\n"), "one line per peer in the window:\n%s", buf.String())
			require.Equal(t, 20*500*time.Millisecond, repeatWindow, "the loop spans exactly one window")
			buf.Reset()
			l.Log(tc.level, tc.msg, tc.key, "n2", "error", "refused")
			var m map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
			require.Equal(t, float64(19), m["repeated"], "the line after the window counts what was collapsed")
			require.Equal(t, "n2", m[tc.key])
		})
	}
	clock := timesource.NewFake(0)
	r := newRepeatLimiter(clock, repeatWindow)
	ok, _ := r.allow(hclog.Error, "failed", []any{"peer", "n2"})
	require.True(t, ok)
	ok, _ = r.allow(hclog.Error, "failed", []any{"target", "n2"})
	require.True(t, ok, "the same address under another key is another line")
}

// TestRaftLoggerAtDebugKeepsEveryRepeat: a handler that writes raft's
// debug lines gets every repeat; the same handler at Info gets them
// collapsed.
func TestRaftLoggerAtDebugKeepsEveryRepeat(t *testing.T) {
	for _, tc := range []struct {
		level slog.Level
		want  int
	}{
		{slog.LevelDebug, 10},
		{LevelTrace, 10},
		{slog.LevelInfo, 1},
		{slog.LevelWarn, 1},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			var buf bytes.Buffer
			clock := timesource.NewFake(0)
			h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tc.level})
			l := newRaftLogger(slog.New(h), "raft", hclog.Trace, newRepeatLimiter(clock, repeatWindow))
			for range 10 {
				l.Error("failed to heartbeat to", "peer", "n2:7000", "error", "refused")
				clock.Advance(500 * time.Millisecond)
			}
			require.Equal(t, tc.want, strings.Count(buf.String(), "\n"), buf.String())
			require.NotContains(t, buf.String(), "repeated")
		})
	}
}
