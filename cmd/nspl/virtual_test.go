package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// virtualClockArgs is the command: 1,000 ticks of a domain with a
// one-hour period, followed under virtual time.
func virtualClockArgs(rate string, ticks int) []string {
	start := "START AT '2030-01-01T00:00:00Z'"
	if rate != "1" {
		start += " TIME RATE " + rate
	}
	return []string{"--virtual-time", "-c",
		"CREATE PACED DOMAIN d WITH PERIOD 1h SKEW 0s; USE d; " + start + ";",
		"clock", "--until-tick", fmt.Sprint(ticks)}
}

// runInProcess runs nspl with args and returns its stdout; stderr must stay
// empty.
func runInProcess(t testing.TB, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
	require.NoError(t, m.Run(ctx, args), "stderr: %s", errOut.String())
	require.Empty(t, errOut.String())
	return out.String()
}

// Under --virtual-time, nspl clock prints every one of 1,000 hourly ticks,
// boundary after boundary, and the same bytes on every run, at rates 1,
// 0.001 and 1000. (How long it takes is BenchmarkVirtualClock's figure.)
func TestVirtualClockRepeatsByteForByte(t *testing.T) {
	const runs, ticks = 10, 1000
	for _, tc := range []struct {
		rate     string
		lastUTC  string // tick 1000's authority reading
		lastTick string
	}{
		{"1", "2030-02-11T15:00:00Z", "2030-02-11T15:00:00Z"},
		{"0.001", "2143-12-20T00:00:00Z", "2030-02-11T15:00:00Z"},
		{"1000", "2030-01-01T00:59:56.4Z", "2030-02-11T15:00:00Z"},
	} {
		t.Run("rate "+tc.rate, func(t *testing.T) {
			first := runInProcess(t, virtualClockArgs(tc.rate, ticks)...)
			lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
			require.Len(t, lines, 4+ticks, "three replies, the attach reply's state, 1,000 ticks")
			require.Equal(t, "clock d generation 1 paced period 1h skew 0s origin 2030-01-01T00:00:00Z anchor 2030-01-01T00:00:00Z rate "+tc.rate, lines[3])
			for i, l := range lines[4:] {
				boundary := time.Date(2030, 1, 1, i, 0, 0, 0, time.UTC).Format(time.RFC3339)
				require.True(t, strings.HasPrefix(l, fmt.Sprintf("tick d generation 1 id %d boundary %s authority_utc ", i+1, boundary)), "line %d: %s", i+5, l)
			}
			require.Equal(t, fmt.Sprintf("tick d generation 1 id %d boundary %s authority_utc %s reading %s", ticks, tc.lastTick, tc.lastUTC, tc.lastTick), lines[len(lines)-1])
			for run := 2; run <= runs; run++ {
				require.Equal(t, first, runInProcess(t, virtualClockArgs(tc.rate, ticks)...), "run %d of %d differs", run, runs)
			}
		})
	}
}

// BenchmarkVirtualClock is the wall time of the command, 1,000
// hourly ticks under --virtual-time, per rate (ms/1000ticks), and its ratio
// to the same command stopping after one tick (an engine's open, three
// statements and the attach: the anchor), measured in the same iterations
// in alternating order.
func BenchmarkVirtualClock(b *testing.B) {
	for _, rate := range []string{"1", "0.001", "1000"} {
		b.Run("rate="+rate, func(b *testing.B) {
			var full, anchor time.Duration
			i := 0
			for b.Loop() {
				order := [][]string{virtualClockArgs(rate, 1000), virtualClockArgs(rate, 1)}
				if i%2 == 1 {
					order[0], order[1] = order[1], order[0]
				}
				for _, args := range order {
					start := time.Now()
					runInProcess(b, args...)
					if args[len(args)-1] == "1000" {
						full += time.Since(start)
					} else {
						anchor += time.Since(start)
					}
				}
				i++
			}
			b.ReportMetric(float64(full.Milliseconds())/float64(i), "ms/1000ticks")
			b.ReportMetric(float64(full)/float64(anchor), "ratio_to_one_tick")
		})
	}
}

// The README's virtual-time examples are true: its 1,000-tick command is
// the one TestVirtualClockRepeatsByteForByte runs, and its example script
// and output are a testdata/delivery file and what that file prints.
func TestREADMEVirtualTimeExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	args := virtualClockArgs("1", 1000)
	command := fmt.Sprintf("nspl %s -c %q %s", args[0], args[2], strings.Join(args[3:], " "))
	require.True(t, strings.Contains(string(readme), "\n"+command+"\n"), "README shows the command the test runs: %s", command)

	m := regexp.MustCompile("(?s)This one, \\[`(testdata/delivery/[a-z0-9_]+\\.nspl)`\\]\\([^)]*\\),\n\n```text\n(.*?)```\n\nprints, with `nspl --virtual-time -f FILE`,\n\n```text\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README's example script and its output")
	path := filepath.Join("../..", string(m[1]))
	script, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(script), string(m[2]), "README's script is %s", m[1])
	require.Equal(t, runInProcess(t, "--virtual-time", "-f", path), string(m[3]), "README shows what the script prints")
}

// Every delivery-order rule, the failure and end frames and a
// transaction's deadline have a golden script in testdata/delivery; nspl
// test runs them all and each prints its .out.
func TestDeliveryGoldenFiles(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}
	err := m.Run(ctx, []string{"test", "../../testdata/delivery"})
	require.NoError(t, err, "%s", out.String())
	for _, name := range []string{"rule1_attach_reply_first", "rule2_ticks_follow_paced_state", "rule3_tick_ids_increase",
		"rule4_end_is_last", "rule5_nothing_after_detach", "failure_frame"} {
		require.Contains(t, out.String(), "ok   ../../testdata/delivery/"+name+".nspl\n")
	}
	require.Contains(t, out.String(), "8 passed, 0 failed, 0 could not run")
}

// README's nspl test example: the script it shows writes the .out it shows.
func TestREADMENsplTestExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)For `create.nspl`\n\n```text\n(.*?)```\n\n`nspl test --rewrite` writes `create.out`:\n\n```text\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README's create.nspl example")
	path := filepath.Join(t.TempDir(), "create.nspl")
	require.NoError(t, os.WriteFile(path, m[1], 0o644))
	require.Equal(t, string(m[2]), runInProcess(t, "--virtual-time", "--continue-on-error", "-f", path))
}

// README's report of nspl test scripts/ is what nspl test prints for the
// tree it describes: create.nspl passing, new.nspl without its .out, and
// sub/fails.out edited to expect another message.
func TestREADMENsplTestReport(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)then a summary:\n\n```text\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README's nspl test report")
	create := regexp.MustCompile("(?s)For `create.nspl`\n\n```text\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, create)

	dir := t.TempDir()
	files := map[string]string{
		"scripts/create.nspl":    string(create[1]),
		"scripts/new.nspl":       "LIST DOMAINS;\n",
		"scripts/sub/fails.nspl": "CREATE DOMAIN beta;\nUSE missing;\n",
	}
	for name, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	t.Chdir(dir)
	out := func(args ...string) string {
		var b bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &b, Stderr: &b}
		_ = m.Run(context.Background(), args)
		return b.String()
	}
	out("test", "--rewrite", "scripts/create.nspl", "scripts/sub/fails.nspl")
	fails, err := os.ReadFile("scripts/sub/fails.out")
	require.NoError(t, err)
	edited := strings.Replace(string(fails), "does not exist", "is missing", 1)
	require.NotEqual(t, string(fails), edited)
	require.NoError(t, os.WriteFile("scripts/sub/fails.out", []byte(edited), 0o644))
	require.Equal(t, string(m[1]), out("test", "scripts/"))
}
