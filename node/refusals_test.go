package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/planner"
)

// lockedBuffer is a log sink safe for the node's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the logged lines that contain s.
func (l *lockedBuffer) lines(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func TestRefusedProgressLogsOncePerWindow(t *testing.T) {
	fake := timesource.NewFake(t0)
	var logs lockedBuffer
	r := newRefusedProgress(fake, slog.New(slog.NewTextHandler(&logs, nil)))
	errForged := errors.New("forged")
	const msg = "implausible progress refused"

	r.record("d", "n1", errForged)
	require.Len(t, logs.lines(msg), 1, "the first refusal is logged at once")
	for range 5 {
		r.record("d", "n1", errForged)
	}
	r.record("e", "n1", errForged)
	require.Len(t, logs.lines(msg), 2, "refusals within the window are only counted; each domain has its own window")
	fake.Advance(refusalWindow - time.Nanosecond)
	r.record("d", "n1", errForged)
	require.Len(t, logs.lines(msg), 2, "still within the window")
	fake.Advance(time.Nanosecond)
	r.record("d", "n1", errForged)
	lines := logs.lines("domain=d ")
	require.Len(t, lines, 2)
	require.Contains(t, lines[1], "refused=7", "the next line carries the refusals since the previous one")
	require.Equal(t, uint64(9), r.count())
	fake.Advance(refusalWindow)
	r.record("d", "n1", errForged)
	require.NotContains(t, r.domains, "e", "a quiet domain's window is dropped")
}

func TestNodeRefusesAndCountsImplausibleProgress(t *testing.T) {
	fake := timesource.NewFake(t0)
	var logs lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	require.NoError(t, n.WaitInstalled(ctx))
	_, err = n.CreateDomain(ctx, paced("p", time.Second, 0))
	require.NoError(t, err)
	_, err = n.Start(ctx, "p", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
	require.NoError(t, err)
	waitTick(t, n, "p", 1)
	f, ok := clockrt.FenceOf(n.registry.Current("p"))
	require.True(t, ok)

	forged := clockrt.ProgressReport{Domain: "p", Generation: f.Generation, Authority: f.Authority,
		ID: 1_000_000_000, Boundary: 0, AuthorityUTC: t0 + int64(10*365*24*time.Hour), Period: f.Period}
	for range 3 {
		ok, err := n.AcceptProgress(f.Authority.Node, forged)
		require.ErrorIs(t, err, clockrt.ErrImplausibleProgress)
		require.False(t, ok)
	}
	require.Equal(t, uint64(3), n.ImplausibleProgress())
	require.Len(t, logs.lines("implausible progress refused"), 1)

	// The genuine next tick is accepted after the forgeries (here or from
	// the node's own producer, whichever comes first).
	fake.Advance(time.Second)
	genuine := clockrt.ProgressReport{Domain: "p", Generation: f.Generation, Authority: f.Authority,
		ID: 2, Boundary: t0 + int64(time.Second), AuthorityUTC: t0 + int64(time.Second), Period: f.Period}
	_, err = n.AcceptProgress(f.Authority.Node, genuine)
	require.NoError(t, err)
	require.Equal(t, genuine.Tick(), n.registry.Progress("p"))
}
