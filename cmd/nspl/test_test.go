package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeTestFiles writes files (path relative to dir: contents) under dir.
func writeTestFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

// runNsplTest runs nspl test with args in process and returns its stdout,
// its stderr and its exit code.
func runNsplTest(t *testing.T, ctx context.Context, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
	err := m.Run(ctx, append([]string{"test"}, args...))
	return stdout.String(), stderr.String(), ExitCode(err)
}

// The JUnit report as a CI reads it, declared apart from the writer's types
// so that a wrong tag there shows here.
type readJUnit struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestTestJUnitReport(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"ok.nspl":       "CREATE DOMAIN a;\n",
		"ok.out":        "created domain 'a'\n",
		"sub/bad.nspl":  "CREATE DOMAIN b;\nCREATE DOMAIN c;\n",
		"sub/bad.out":   "created domain 'b'\ncreated domain 'x'\n",
		"sub/none.nspl": "CREATE DOMAIN d;\n",
	})
	report := filepath.Join(dir, "report.xml")
	stdout, _, code := runNsplTest(t, context.Background(), "--junit", report, dir)
	require.Equal(t, ExitTestCannotRun, code, stdout)

	b, err := os.ReadFile(report)
	require.NoError(t, err)
	var r readJUnit
	require.NoError(t, xml.Unmarshal(b, &r), string(b))
	require.Len(t, r.Suites, 1)
	s := r.Suites[0]
	require.Equal(t, "nspl test", s.Name)
	require.Equal(t, 3, s.Tests)
	require.Equal(t, 1, s.Failures)
	require.Equal(t, 1, s.Errors)
	require.Regexp(t, `^\d+\.\d{3}$`, s.Time)

	require.Len(t, s.Cases, 3, "one testcase per file")
	var names []string
	for _, c := range s.Cases {
		names = append(names, c.Name)
		require.Regexp(t, `^\d+\.\d{3}$`, c.Time, c.Name)
	}
	slash := filepath.ToSlash(dir)
	require.Equal(t, []string{slash + "/ok.nspl", slash + "/sub/bad.nspl", slash + "/sub/none.nspl"}, names)

	ok, bad, none := s.Cases[0], s.Cases[1], s.Cases[2]
	require.Nil(t, ok.Failure)
	require.Nil(t, ok.Error)
	require.Equal(t, slash, ok.Classname)
	require.Equal(t, slash+"/sub", bad.Classname)

	require.NotNil(t, bad.Failure)
	require.Nil(t, bad.Error)
	require.Contains(t, bad.Failure.Message, "at line 2")
	require.Contains(t, bad.Failure.Text, "\n-created domain 'x'\n+created domain 'c'\n", "the failure carries the diff")
	require.Contains(t, bad.Failure.Text, filepath.Join(dir, "sub", "bad.out")+":2: first difference")

	require.Nil(t, none.Failure)
	require.NotNil(t, none.Error)
	require.Contains(t, none.Error.Message, "nspl test --rewrite "+filepath.Join(dir, "sub", "none.nspl"))
}

// TestTestJUnitEscapes writes a report whose diff holds markup, a CDATA
// end and bytes XML cannot carry: it still parses, and says the rest.
func TestTestJUnitEscapes(t *testing.T) {
	report := filepath.Join(t.TempDir(), "r.xml")
	text := "<b>&amp; \"q\" ]]> \x1b[31m\x00 ok\n"
	tr := &testRun{opts: testOptions{junit: report}, cases: []*testCase{
		{path: "a<b>.nspl", status: testFailed, diff: []byte(text), line: 3},
		{path: "c&d.nspl", status: testCannotRun, reason: text},
	}}
	require.NoError(t, tr.writeJUnit(time.Second))
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	var r readJUnit
	require.NoError(t, xml.Unmarshal(b, &r), string(b))
	cases := r.Suites[0].Cases
	require.Equal(t, "a<b>.nspl", cases[0].Name)
	require.Equal(t, "c&d.nspl", cases[1].Name)
	want := "<b>&amp; \"q\" ]]> \uFFFD[31m\uFFFD ok\n"
	require.Equal(t, want+"a<b>.out:3: first difference\n", cases[0].Failure.Text)
	require.Equal(t, want, cases[1].Error.Text)
	require.Equal(t, strings.TrimSuffix(want, "\n"), cases[1].Error.Message)
}

func TestTestRewriteKeepsMode(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"old.nspl": "CREATE DOMAIN a;\n",
		"old.out":  "stale\n",
		"new.nspl": "CREATE DOMAIN b;\n",
	})
	old := filepath.Join(dir, "old.out")
	require.NoError(t, os.Chmod(old, 0o600))

	stdout, _, code := runNsplTest(t, context.Background(), "--rewrite", dir)
	require.Equal(t, ExitOK, code, stdout)
	require.Equal(t, "rewrote "+filepath.Join(dir, "new.out")+"\nrewrote "+old+"\n0 passed, 2 rewritten, 0 could not run\n", stdout)
	for name, mode := range map[string]os.FileMode{"old.out": 0o600, "new.out": 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, mode, fi.Mode().Perm(), name)
	}
	got, err := os.ReadFile(old)
	require.NoError(t, err)
	require.Equal(t, "created domain 'a'\n", string(got))

	stdout, _, code = runNsplTest(t, context.Background(), dir)
	require.Equal(t, ExitOK, code, stdout)
	require.Contains(t, stdout, "2 passed, 0 failed, 0 could not run\n")
}

// TestTestParallelOrder runs many files on several workers: the report is
// in file order, byte for byte the report of one worker.
func TestTestParallelOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 12 {
		name := fmt.Sprintf("s%02d", i)
		files[name+".nspl"] = fmt.Sprintf("CREATE DOMAIN d%d;\nUSE nowhere;\n", i)
		want := fmt.Sprintf("created domain 'd%d'\n", i) +
			fmt.Sprintf("%s.nspl:2:1: error: domain 'nowhere' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN nowhere first\nUSE nowhere;\n^\n", name)
		if i%3 == 0 {
			want = "wrong\n"
		}
		files[name+".out"] = want
	}
	writeTestFiles(t, dir, files)
	serial, _, code := runNsplTest(t, context.Background(), "--parallel", "1", dir)
	require.Equal(t, ExitTestFailed, code, serial)
	require.Contains(t, serial, "8 passed, 4 failed, 0 could not run\n")
	var heads []string
	for _, line := range strings.Split(serial, "\n") {
		if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "--- FAIL: ") {
			heads = append(heads, line)
		}
	}
	require.Len(t, heads, 12)
	for i, h := range heads {
		require.True(t, strings.HasSuffix(h, fmt.Sprintf("s%02d.nspl", i)), h)
		require.Equal(t, i%3 == 0, strings.HasPrefix(h, "--- FAIL: "), h)
	}
	for range 3 {
		parallel, _, code := runNsplTest(t, context.Background(), "--parallel", "6", dir)
		require.Equal(t, ExitTestFailed, code)
		require.Equal(t, serial, parallel)
	}
}

func TestTestOutputLimit(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"big.nspl":   "CREATE DOMAIN a;\nLIST DOMAINS;\nLIST DOMAINS;\n",
		"big.out":    "",
		"small.nspl": "CREATE DOMAIN a;\n",
		"small.out":  "created domain 'a'\n",
	})
	var stdout bytes.Buffer
	m := &Main{Stdout: &stdout, Stderr: &stdout}
	tr := &testRun{m: m, opts: testOptions{parallel: 2, paths: []string{dir}}, outputLimit: 100}
	err := tr.run(context.Background())
	require.Equal(t, ExitTestCannotRun, ExitCode(err), stdout.String())
	require.Contains(t, stdout.String(), "--- ERROR: "+filepath.Join(dir, "big.nspl")+"\n    its output is over 100 bytes")
	require.Contains(t, stdout.String(), "ok   "+filepath.Join(dir, "small.nspl")+"\n")
	require.Contains(t, stdout.String(), "1 passed, 0 failed, 1 could not run\n")
}

func TestTestInterrupted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("s%d.nspl", i)] = "CREATE DOMAIN a;\n"
	}
	writeTestFiles(t, dir, files)

	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		stdout, _, code := runNsplTest(t, ctx, "--rewrite", dir)
		require.Equal(t, ExitFailed, code)
		require.Equal(t, "interrupted: 0 passed, 0 rewritten, 0 could not run, 8 not run\n", stdout)
		outs, err := filepath.Glob(filepath.Join(dir, "*.out"))
		require.NoError(t, err)
		require.Empty(t, outs, "a file that did not run is not rewritten")
	})
	t.Run("ctrl-c", func(t *testing.T) {
		intr := make(chan os.Signal, 1)
		intr <- os.Interrupt
		var stdout bytes.Buffer
		m := &Main{Stdout: &stdout, Stderr: &stdout, Interrupts: intr}
		err := m.Run(context.Background(), []string{"test", "--parallel", "1", dir})
		require.ErrorIs(t, err, ErrInterrupted)
		require.Equal(t, ExitFailed, ExitCode(err))
		m1 := regexp.MustCompile(`(?m)^interrupted: 0 passed, 0 failed, (\d) could not run, (\d) not run\n\z`).FindStringSubmatch(stdout.String())
		require.NotNil(t, m1, stdout.String())
		require.Equal(t, "8", fmt.Sprint(atoi(t, m1[1])+atoi(t, m1[2])), "every file is counted")
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

func TestTestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{"a.nspl": "CREATE DOMAIN a;\n", "a.out": "created domain 'a'\n", "notes.txt": "x\n"})
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--bogus"}, "test: unknown flag --bogus"},
		{[]string{"--rewrit", dir}, "did you mean --rewrite?"},
		{[]string{dir, filepath.Join(dir, "notes.txt")}, "notes.txt is not a .nspl file"},
		{[]string{"--parallel", "0", dir}, "--parallel 0; give at least 1"},
		{[]string{"--parallel", "x", dir}, "invalid value"},
		{[]string{"--junit=", dir}, "--junit needs a file name"},
		{[]string{""}, "empty path"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			m := &Main{Stdout: &stdout, Stderr: &stderr}
			err := m.Run(context.Background(), append([]string{"test"}, tt.args...))
			require.Equal(t, ExitUsage, ExitCode(err))
			require.ErrorContains(t, err, tt.msg)
			require.Equal(t, "Run 'nspl test --help' for usage.", helpHint(err))
			require.Empty(t, stdout.String(), "nothing ran")
		})
	}
}

func TestFirstDifference(t *testing.T) {
	tests := []struct {
		want, got string
		line      int
	}{
		{"a\nb\nc\n", "a\nx\nc\n", 2},
		{"a\nb\n", "x\n", 1},
		{"a\nb\n", "a\nb\nc\n", 3},  // got adds a line after the last
		{"a\nb\nc\n", "a\nb\n", 3},  // got lacks the last line
		{"a\nb", "a\nb\n", 2},       // only the final newline
		{"", "a\n", 1},              // an empty .out
		{"a\n\nb\n", "a\nb\n", 2},   // a blank line dropped
		{"x\ny\n", "x\ny\nz", 3},    // an unterminated extra line
		{"line\n", "line \n", 1},    // trailing space
		{"a\r\nb\n", "a\nb\n", 1},   // line endings
		{"same\n", "same\nsame", 2}, // not one past the .out's last, but where got goes on
	}
	for _, tt := range tests {
		require.Equal(t, tt.line, firstDifference([]byte(tt.want), []byte(tt.got)), "%q %q", tt.want, tt.got)
	}
}

// TestTestOutputIsTheCommands checks that what nspl test compares is what
// nspl --virtual-time --continue-on-error -f NAME.nspl prints in the
// script's directory, stdout and stderr together, an error main prints
// itself included.
func TestTestOutputIsTheCommands(t *testing.T) {
	dir := t.TempDir()
	script := "CREATE DOMAIN a;\nUSE b;\n\\unknown\nLIST DOMAINS;\n"
	writeTestFiles(t, dir, map[string]string{"s.nspl": script})
	tr := &testRun{m: &Main{}, outputLimit: maxTestOutput}
	got, reason := tr.runScript(context.Background(), filepath.Join(dir, "s.nspl"))
	require.Empty(t, reason)
	require.Contains(t, string(got), "s.nspl:2:1: error: domain 'b' does not exist")
	require.NotContains(t, string(got), dir, "the script is named as in its directory")

	t.Chdir(dir)
	both := &testOutput{limit: maxTestOutput, full: func() {}}
	m := &Main{Stdin: strings.NewReader(""), Stdout: both, Stderr: both}
	err := m.Run(context.Background(), []string{"--virtual-time", "--continue-on-error", "-f", "s.nspl"})
	require.Equal(t, ExitFailed, ExitCode(err))
	writeRunError(both, err) // what main prints after Run
	require.Equal(t, string(both.Bytes()), string(got))
}
