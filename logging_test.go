package nspl_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl"
)

// quietChild names the environment variable that makes
// TestOpenWithZeroOptionsWritesNothing the child process it runs; its value
// is the data directory the child uses.
const quietChild = "NSPL_TEST_QUIET_CHILD"

// An engine opened with zero Options, in memory and on a data directory
// opened twice, that creates, starts, follows and restarts a domain writes
// nothing to stderr: the child process runs the engine and the parent reads
// everything the child wrote, raft's own output and anything written to
// os.Stderr directly included.
func TestOpenWithZeroOptionsWritesNothing(t *testing.T) {
	if dir := os.Getenv(quietChild); dir != "" {
		runQuietEngines(t, dir)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenWithZeroOptionsWritesNothing$", "-test.count=1")
	cmd.Env = append(os.Environ(), quietChild+"="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "child: %s%s", stdout.String(), stderr.String())
	require.Contains(t, stdout.String(), "PASS", "the child ran the engines")
	require.Empty(t, stderr.String(), "an engine opened with zero Options wrote to stderr")
}

func runQuietEngines(t *testing.T, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(opts nspl.Options, text string) error {
		eng, err := nspl.Open(ctx, opts)
		require.NoError(t, err)
		defer func() { require.NoError(t, eng.Close()) }()
		sess, err := eng.NewSession()
		require.NoError(t, err)
		if _, err := sess.ExecText(ctx, text); err != nil {
			return err
		}
		ev, err := sess.NextEvent(ctx)
		require.NoError(t, err)
		require.Equal(t, nspl.EventTick, ev.Kind)
		return nil
	}
	const create = "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW; ATTACH DOMAIN CLOCK;"
	require.NoError(t, run(nspl.Options{}, create))
	require.NoError(t, run(nspl.Options{DataDir: dir}, create))
	// The restarted engine resumes the running domain: START is refused,
	// and the clock is followed again.
	err := run(nspl.Options{DataDir: dir}, "USE prod; START AT NOW;")
	require.ErrorIs(t, err, nspl.ErrAlreadyRunning)
	require.NoError(t, run(nspl.Options{DataDir: dir}, "USE prod; ATTACH DOMAIN CLOCK;"))
}

// recorder is a slog handler that keeps every record it is given.
type recorder struct {
	level slog.Level
	mu    *sync.Mutex
	recs  *[]slog.Record
}

func newRecorder(level slog.Level) recorder {
	return recorder{level: level, mu: new(sync.Mutex), recs: new([]slog.Record)}
}

func (r recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.recs = append(*r.recs, rec.Clone())
	return nil
}
func (r recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recorder) WithGroup(string) slog.Handler      { return r }

func (r recorder) levels(msg string) []slog.Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Level
	for _, rec := range *r.recs {
		if rec.Message == msg {
			out = append(out, rec.Level)
		}
	}
	return out
}

// Options.Logger's handler alone decides what is written: at Debug it
// receives raft's routine election lines at Debug, at Info none of them
// and the engine's own lines, at Warn nothing from an engine that works.
func TestLoggerAloneFiltersRaft(t *testing.T) {
	tests := []struct {
		level      slog.Level
		leader     []slog.Level // "entering leader state"
		election   []slog.Level // "heartbeat timeout reached, starting election"
		anyRecords bool
	}{
		{slog.LevelDebug, []slog.Level{slog.LevelDebug}, []slog.Level{slog.LevelDebug}, true},
		{slog.LevelInfo, nil, nil, true},
		{slog.LevelWarn, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.level.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rec := newRecorder(tt.level)
			eng, err := nspl.Open(ctx, nspl.Options{Logger: slog.New(rec)})
			require.NoError(t, err)
			require.NoError(t, eng.Close())
			require.Equal(t, tt.leader, rec.levels("entering leader state"))
			require.Equal(t, tt.election, rec.levels("heartbeat timeout reached, starting election"))
			rec.mu.Lock()
			n := len(*rec.recs)
			var msgs []string
			for _, r := range *rec.recs {
				msgs = append(msgs, r.Level.String()+" "+r.Message)
			}
			rec.mu.Unlock()
			require.Equal(t, tt.anyRecords, n > 0, "records: %s", strings.Join(msgs, "; "))
		})
	}
}
