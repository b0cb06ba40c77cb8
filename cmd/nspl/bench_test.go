package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// script1000 is 1,000 statements: 250 domains each created, used, started
// and stopped.
func script1000() string {
	var b strings.Builder
	for i := range 250 {
		fmt.Fprintf(&b, "CREATE DOMAIN d%d;\nUSE d%d;\nSTART AT NOW;\nSTOP;\n", i, i)
	}
	return b.String()
}

// BenchmarkScript1000 runs a 1,000-statement script through the runner on a
// fresh in-memory node per iteration (node start included).
func BenchmarkScript1000(b *testing.B) {
	text := script1000()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	for b.Loop() {
		n, err := node.Open(context.Background(), node.Config{Logger: logger, RaftLogLevel: slog.LevelError})
		require.NoError(b, err)
		sess := session.New(n, session.Options{Logger: logger})
		r := &runner{exec: sess, stdout: io.Discard, stderr: io.Discard, format: formatTable, outMu: new(sync.Mutex)}
		out, err := r.runText(context.Background(), "bench.nspl", text, false)
		require.NoError(b, err)
		require.Zero(b, out.failed)
		sess.Close()
		n.Close()
	}
}

// BenchmarkCutStatements measures the per-line work of the shell's
// statement accumulation on a three-line statement.
func BenchmarkCutStatements(b *testing.B) {
	text := "CREATE PACED DOMAIN prod\n  WITH PERIOD 1s SKEW 100ms -- the clock\n  PLACEMENT REQUIRE COLOCATION; USE"
	b.ReportAllocs()
	for b.Loop() {
		cutStatements(text)
	}
}

// BenchmarkComplete measures one Tab press on a continuation line.
func BenchmarkComplete(b *testing.B) {
	c := statementCompleter{
		pending: func() string { return "CREATE PACED DOMAIN prod" },
		domains: func() []string { return []string{"prod", "archive", "prod-1"} },
	}
	line := []rune("WITH PERIOD 1s SK")
	b.ReportAllocs()
	for b.Loop() {
		c.Do(line, len(line))
	}
}

func BenchmarkRenderTable(b *testing.B) {
	set := &wire.ResultSet{Columns: []wire.Column{{Name: "name"}, {Name: "pace"}, {Name: "status"}, {Name: "generation"}}}
	for i := range 20 {
		set.Rows = append(set.Rows, []wire.Value{wire.Text(fmt.Sprintf("d%d", i)), wire.Text("PACED"), wire.Text("running"), wire.Uint(uint64(i))})
	}
	res := wire.Result{Message: "20 domains", Set: set}
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, renderResult(io.Discard, formatTable, res))
	}
}

// BenchmarkCommandRatio runs the built nspl binary as `nspl -c 'LIST
// DOMAINS;'` (an embedded in-memory node opened, one statement run, the
// node closed) beside two anchors in the same run, alternating which goes
// first: `sqlite3 :memory: 'SELECT 1;'` when sqlite3 is on PATH, and the
// same binary's `--version`, which is process start alone. It reports the
// wall time of each in milliseconds and the ratios.
func BenchmarkCommandRatio(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "nspl")
	// Built as `make nspl` builds the released binary: static.
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(b, err, "%s", out)
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_STATE_HOME="+dir)
	type anchor struct {
		name string
		argv []string
		wall time.Duration
	}
	runs := []*anchor{
		{name: "nspl-c", argv: []string{bin, "-c", "LIST DOMAINS;"}},
		{name: "version", argv: []string{bin, "--version"}},
	}
	if sqlite, err := exec.LookPath("sqlite3"); err == nil {
		runs = append(runs, &anchor{name: "sqlite3", argv: []string{sqlite, ":memory:", "SELECT 1;"}})
	}
	run := func(a *anchor) {
		cmd := exec.Command(a.argv[0], a.argv[1:]...)
		cmd.Env = env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", a.name, err, out)
		}
		a.wall += time.Since(start)
	}
	i := 0
	for b.Loop() {
		for j := range runs {
			run(runs[(i+j)%len(runs)])
		}
		i++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(i) }
	for _, a := range runs {
		b.ReportMetric(ms(a.wall), a.name+"-ms")
		if a != runs[0] {
			b.ReportMetric(float64(runs[0].wall)/float64(a.wall), "ratio-"+a.name)
		}
	}
}
