package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/atomicfile"
)

// testUsage is what nspl test --help prints.
const testUsage = `nspl test - run .nspl scripts and compare their output with .out files

Usage:
  nspl test [--rewrite] [--junit FILE] [--parallel N] [FILE|DIR]...

Each FILE (NAME.nspl) runs on a fresh embedded node under virtual time,
and what it prints is compared with NAME.out beside it. A DIR stands for
every *.nspl file under it, recursively, in sorted order; no argument is
the current directory. No symbolic link is followed: one inside a DIR is
skipped with a note on stderr, and one given as an argument cannot run.

Files, side by side:
  scripts/create.nspl   the script
  scripts/create.out    what it prints, byte for byte: in scripts/, the output of
                        nspl --virtual-time --continue-on-error -f create.nspl 2>&1

Why a separate .out file rather than expectations inside the script: the
expected output is then byte for byte what that command prints (stdout and
stderr together, in the order written), so a failure can be reproduced and
inspected by hand, and --rewrite writes it without touching the script. A
statement that fails is part of the output, not a test failure. A script
is named by its base name in its diagnostics, as when run in its
directory; nspl test does not change directory, so a relative path in a
script (\i FILE, BACKUP ... TO) is taken from where nspl test runs.

Flags:
  --rewrite     write each script's actual output to its .out file
                (crash-safely, keeping the mode of an existing one; 0644
                for a new one) instead of comparing; rewrote NAME.out is
                printed for each that changed
  --junit FILE  also write a JUnit XML report to FILE, one test case per
                script, even when a test fails
  --parallel N  run at most N scripts at once (default: the number of CPUs
                Go uses, GOMAXPROCS)
  -h, --help    print this help

Output, in the sorted order of the files:
  ok   DIR/NAME.nspl            its output is NAME.out
  --- FAIL: DIR/NAME.nspl       a unified diff (- NAME.out, + the actual
                                output), then DIR/NAME.out:LINE: first difference
  --- ERROR: DIR/NAME.nspl      it cannot run; the indented lines say why
  N passed, M failed, K could not run

Exit codes:
  0  every script printed its .out (or, with --rewrite, it was written)
  1  a script's output differs from its .out, or Ctrl-C stopped the run
  2  usage error: an unknown flag, a FILE that is not a .nspl file
  3  a script cannot run: it has no .out (run nspl test --rewrite FILE to
     create it), a file cannot be read or written, its output is over
     16 MiB, or nspl refuses to run it
When both 1 and 3 apply, 3 wins; every script still runs.

Examples:
  nspl test                               every script under the current directory
  nspl test --rewrite scripts/new.nspl    create or update scripts/new.out
  nspl test --junit report.xml scripts    for CI: a report any CI can read
`

// Exit codes of nspl test, which has its own (nspl test --help lists them):
// 0 and 2 as nspl's, and these.
const (
	// ExitTestFailed means a script's output differs from its .out file.
	ExitTestFailed = 1
	// ExitTestCannotRun means a script could not run or be compared.
	ExitTestCannotRun = 3
)

// Sentinel errors of nspl test's outcome.
var (
	// ErrTestFailed reports that a script's output differs from its .out.
	ErrTestFailed = errors.New("test failed")
	// ErrTestCannotRun reports a script that could not run or be compared.
	ErrTestCannotRun = errors.New("test cannot run")
)

// maxTestOutput bounds what one script may print under nspl test: its
// output is kept in memory to be compared, so a script that prints without
// end cannot run rather than exhaust memory.
const maxTestOutput = 16 << 20

// testOptions are the parsed nspl test command line.
type testOptions struct {
	rewrite  bool
	junit    string
	parallel int
	paths    []string
}

// testFlagSet is nspl test's flags, which parse into o; help and the
// completion scripts list them from it.
func testFlagSet(o *testOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("nspl test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.rewrite, "rewrite", false, "write each script's actual output to its .out file instead of comparing")
	fs.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "run at most `N` scripts at once")
	return fs
}

// parseTestArgs parses args (after "test"). Flags may come before, between
// or after the paths; "--" ends the flags. It returns flag.ErrHelp when help
// was asked for.
func parseTestArgs(args []string) (testOptions, error) {
	var o testOptions
	fs := testFlagSet(&o)
	paths, err := parseFlagsAndPaths(fs, "test", args)
	if err != nil {
		return o, err
	}
	o.paths = paths
	if o.parallel < 1 {
		return o, &RunError{Kind: ErrUsage, Err: fmt.Errorf("test: --parallel %d; give at least 1", o.parallel), Help: "test"}
	}
	if o.junit == "" && flagGiven(fs, "junit") {
		return o, &RunError{Kind: ErrUsage, Err: errors.New("test: --junit needs a file name"), Help: "test"}
	}
	for _, p := range o.paths {
		if p == "" {
			return o, &RunError{Kind: ErrUsage, Err: errors.New("test: empty path; give a .nspl file or a directory"), Help: "test"}
		}
	}
	return o, nil
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// runTest runs nspl test with args (after "test"): golden-file tests for
// scripts, which runs .nspl scripts and compares what each prints with the
// NAME.out file beside it.
//
// The expected output lives in a file of its own, not inline in the script,
// because it is then exactly what
//
//	nspl --virtual-time --continue-on-error -f NAME.nspl
//
// prints in the script's directory (stdout and stderr together, in the
// order written): a user reproduces or inspects a failure by running that
// command by hand and diffing, and --rewrite writes the expected output
// without touching the script. Virtual time makes the output the same bytes
// on every run, clock frames included, in no wall time.
//
// Each script runs in process, on a fresh Main of its own with a fresh
// embedded node; several run at once (--parallel), and the results are
// printed in the sorted order of the files whatever order they finish in,
// so the report is deterministic. The process's working directory is shared
// by the parallel runs and is never changed.
func (m *Main) runTest(ctx context.Context, args []string) error {
	opts, err := parseTestArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		return m.writeText(testUsage)
	}
	if err != nil {
		return err
	}
	if len(opts.paths) == 0 {
		opts.paths = []string{"."}
	}
	t := &testRun{m: m, opts: opts, outputLimit: maxTestOutput}
	return t.run(ctx)
}

// testStatus is what became of one script.
type testStatus int

const (
	testNotRun    testStatus = iota // Ctrl-C came first
	testPassed                      // the output is the .out file's
	testFailed                      // the output differs
	testCannotRun                   // it could not run or be compared
	testRewritten                   // --rewrite wrote a changed .out
)

// testCase is one script and, once it has run, its outcome.
type testCase struct {
	path string // the script, as found
	// problem, when not empty, is why the script cannot run, known before
	// it would (an argument that is a link or does not exist).
	problem string

	status  testStatus
	reason  string // why it cannot run
	output  []byte // what it printed
	want    []byte // its .out file; nil when there is none
	outMode fs.FileMode
	hasOut  bool
	elapsed time.Duration
	diff    []byte // with testFailed, the unified diff
	line    int    // with testFailed, the .out line of the first difference
}

// outPath is the .out file beside the script.
func (c *testCase) outPath() string {
	return strings.TrimSuffix(c.path, ".nspl") + ".out"
}

// testRun is one nspl test: the scripts it found and what became of them.
type testRun struct {
	m           *Main
	opts        testOptions
	outputLimit int // what one script may print
	cases       []*testCase
}

// clock is what the report's times are measured on: the Main's injected
// source, or the system clock.
func (t *testRun) clock() timesource.Source {
	if t.m.TimeSource != nil {
		return t.m.TimeSource
	}
	return timesource.System()
}

// run finds the scripts, runs them, reports and returns the run's error.
func (t *testRun) run(ctx context.Context) error {
	if err := t.collect(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer t.m.setInterruptHandler(cancel)() // Ctrl-C starts no new script
	stopIntr := t.m.routeInterrupts(ctx)
	defer stopIntr()

	start := t.clock().Monotonic()
	done := make([]chan struct{}, len(t.cases))
	for i := range done {
		done[i] = make(chan struct{})
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(t.opts.parallel, max(len(t.cases), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				t.runCase(ctx, t.cases[i])
				close(done[i])
			}
		}()
	}
	go func() {
		for i := range t.cases {
			jobs <- i
		}
		close(jobs)
	}()
	// Report in file order as each is done, so the report is the same
	// whatever order the scripts finish in, and appears as it goes.
	var outErr error
	for i, c := range t.cases {
		<-done[i]
		t.finish(c)
		if err := t.report(c); err != nil && outErr == nil {
			outErr = err
		}
	}
	wg.Wait()
	elapsed := t.clock().Monotonic() - start

	n := t.count()
	interrupted := ctx.Err() != nil
	summary := fmt.Sprintf("%d passed, %d failed, %d could not run", n[testPassed], n[testFailed], n[testCannotRun])
	if t.opts.rewrite {
		summary = fmt.Sprintf("%d passed, %d rewritten, %d could not run", n[testPassed], n[testRewritten], n[testCannotRun])
	}
	if interrupted {
		summary = "interrupted: " + summary + fmt.Sprintf(", %d not run", n[testNotRun])
	}
	if _, err := fmt.Fprintln(t.m.Stdout, summary); err != nil && outErr == nil {
		outErr = err
	}
	if t.opts.junit != "" {
		if err := t.writeJUnit(elapsed); err != nil {
			fmt.Fprintf(t.m.Stderr, "nspl test: --junit: %v\n", err)
			return &RunError{Kind: ErrIO, Err: err, Reported: true, Code: ExitTestCannotRun}
		}
	}
	switch {
	case outErr != nil:
		return &RunError{Kind: ErrIO, Err: fmt.Errorf("write stdout: %w", outErr), Code: ExitTestCannotRun}
	case interrupted:
		return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted, Reported: true}
	case n[testCannotRun] > 0:
		return &RunError{Kind: ErrTestCannotRun, Err: fmt.Errorf("%d script(s) could not run", n[testCannotRun]), Reported: true, Code: ExitTestCannotRun}
	case n[testFailed] > 0:
		return &RunError{Kind: ErrTestFailed, Err: fmt.Errorf("%d script(s) failed", n[testFailed]), Reported: true, Code: ExitTestFailed}
	}
	return nil
}

func (t *testRun) count() map[testStatus]int {
	n := map[testStatus]int{}
	for _, c := range t.cases {
		n[c.status]++
	}
	return n
}

// collect finds the scripts the paths name, sorted and each once. A FILE
// that is not a .nspl file is a usage error, found before anything runs.
// It follows no symbolic link: a link given as an argument cannot run, and
// one met inside a DIR is skipped with a note on stderr, so the scripts
// tested are the tree's own, each once.
func (t *testRun) collect() error {
	byPath := map[string]*testCase{}
	add := func(path, problem string) {
		path = filepath.Clean(path)
		if _, ok := byPath[path]; !ok {
			byPath[path] = &testCase{path: path, problem: problem}
		}
	}
	for _, p := range t.opts.paths {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			add(p, err.Error())
		case fi.Mode()&fs.ModeSymlink != 0:
			add(p, fmt.Sprintf("%s is a symbolic link; nspl test follows no link, so name the file or directory it points to", p))
		case fi.IsDir():
			if err := t.walk(p, add); err != nil {
				return err
			}
		case !strings.HasSuffix(p, ".nspl"):
			return &RunError{Kind: ErrUsage, Err: fmt.Errorf("test: %s is not a .nspl file; give scripts (NAME.nspl, beside their NAME.out) or directories", p), Help: "test"}
		case !fi.Mode().IsRegular():
			add(p, fmt.Sprintf("%s is not a regular file", p))
		default:
			add(p, "")
		}
	}
	for _, c := range byPath {
		t.cases = append(t.cases, c)
	}
	sort.Slice(t.cases, func(i, j int) bool { return t.cases[i].path < t.cases[j].path })
	return nil
}

// walk adds every *.nspl regular file under dir.
func (t *testRun) walk(dir string, add func(path, problem string)) error {
	return walkScripts(dir, "test", t.m.Stderr,
		func(p string, d fs.DirEntry) {
			if !d.Type().IsRegular() {
				fmt.Fprintf(t.m.Stderr, "nspl test: skipping %s, not a regular file\n", p)
				return
			}
			add(p, "")
		},
		func(p string, err error) { add(p, err.Error()) })
}

// runCase runs one script (unless Ctrl-C came first) and reads its .out.
func (t *testRun) runCase(ctx context.Context, c *testCase) {
	if c.problem != "" {
		c.status, c.reason = testCannotRun, c.problem
		return
	}
	if ctx.Err() != nil {
		c.status = testNotRun
		return
	}
	start := t.clock().Monotonic()
	out, reason := t.runScript(ctx, c.path)
	c.elapsed = t.clock().Monotonic() - start
	if ctx.Err() != nil {
		// Ctrl-C may have cut its output short: it counts as not run.
		c.status = testNotRun
		return
	}
	if reason != "" {
		c.status, c.reason = testCannotRun, reason
		return
	}
	c.output = out
	if reason := t.readOut(c); reason != "" {
		c.status, c.reason = testCannotRun, reason
		return
	}
	c.status = testPassed
	switch {
	case t.opts.rewrite:
	case !c.hasOut:
		c.status = testCannotRun
		c.reason = fmt.Sprintf("%s does not exist; run nspl test --rewrite %s to create it", c.outPath(), c.path)
	case !bytes.Equal(c.want, c.output):
		c.status = testFailed
		c.diff = diff.Diff(c.outPath(), c.want, c.outPath()+" (actual)", c.output)
		c.line = firstDifference(c.want, c.output)
	}
}

// runScript runs the script at path as nspl --virtual-time
// --continue-on-error -f path would, on a Main of its own, and returns what
// it printed, or why it cannot run. A statement that fails is output, not a
// reason: only a run nspl itself refuses (a usage or I/O error: exit 2, 3
// or 4) cannot run.
func (t *testRun) runScript(ctx context.Context, path string) ([]byte, string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := &testOutput{limit: t.outputLimit, full: cancel}
	sub := &Main{
		Stdin:           strings.NewReader(""),
		Stdout:          out,
		Stderr:          out,
		StdinIsTerminal: func() bool { return false },
		// Named as when run in its directory, so its .out does not
		// depend on where nspl test runs.
		scriptName: func(string) string { return filepath.Base(path) },
	}
	err := sub.Run(ctx, []string{"--virtual-time", "--continue-on-error", "-f", path})
	if out.overflowed() {
		return nil, t.overLimit()
	}
	switch code := ExitCode(err); code {
	case ExitOK, ExitFailed:
	default:
		msg := err.Error()
		if text := strings.TrimSpace(out.String()); text != "" {
			msg += "\n" + text
		}
		return nil, fmt.Sprintf("nspl exits %d: %s", code, msg)
	}
	// What main prints for an error the run did not report itself.
	writeRunError(out, err)
	if out.overflowed() {
		return nil, t.overLimit()
	}
	return out.Bytes(), ""
}

// overLimit is why a script that printed more than outputLimit cannot run.
func (t *testRun) overLimit() string {
	size := fmt.Sprintf("%d bytes", t.outputLimit)
	if t.outputLimit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", t.outputLimit>>20)
	}
	return "its output is over " + size + ", more than nspl test keeps to compare; print less"
}

// readOut reads the script's .out file into c, and returns why it cannot,
// if it cannot; a missing one is not a reason here. It follows no
// symbolic link, as --rewrite would replace the link and not its target.
func (t *testRun) readOut(c *testCase) string {
	path := c.outPath()
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Sprintf("%s is a symbolic link; nspl test reads and writes through no link", path)
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file", path)
	}
	b, err := readFileLimited(path, int64(t.outputLimit))
	if err != nil {
		return err.Error()
	}
	c.want, c.hasOut, c.outMode = b, true, fi.Mode().Perm()
	return ""
}

// finish writes a rewritten .out, in file order.
func (t *testRun) finish(c *testCase) {
	if !t.opts.rewrite || c.status != testPassed || c.hasOut && bytes.Equal(c.want, c.output) {
		return
	}
	mode := fs.FileMode(0o644)
	if c.hasOut {
		mode = c.outMode
	}
	if err := atomicfile.WriteFile(c.outPath(), c.output, mode); err != nil {
		c.status, c.reason = testCannotRun, err.Error()
		return
	}
	c.status = testRewritten
}

// report prints one script's outcome.
func (t *testRun) report(c *testCase) error {
	var b bytes.Buffer
	switch c.status {
	case testNotRun:
		return nil
	case testPassed:
		fmt.Fprintf(&b, "ok   %s\n", c.path)
	case testRewritten:
		fmt.Fprintf(&b, "rewrote %s\n", c.outPath())
	case testFailed:
		fmt.Fprintf(&b, "--- FAIL: %s\n", c.path)
		b.Write(c.diff)
		fmt.Fprintf(&b, "%s:%d: first difference\n", c.outPath(), c.line)
	case testCannotRun:
		fmt.Fprintf(&b, "--- ERROR: %s\n", c.path)
		for _, line := range strings.Split(c.reason, "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	_, err := t.m.Stdout.Write(b.Bytes())
	return err
}

// firstDifference is the 1-based line of want where got first differs
// from it (one past its last line when got only adds lines).
func firstDifference(want, got []byte) int {
	w := bytes.SplitAfter(want, []byte("\n"))
	g := bytes.SplitAfter(got, []byte("\n"))
	for i := 0; ; i++ {
		if i >= len(w) || i >= len(g) || !bytes.Equal(w[i], g[i]) {
			return i + 1
		}
	}
}

// testOutput is what one script prints, stdout and stderr together in the
// order written: the two are written from different goroutines (a notice
// from the client arrives while a statement's result is printed). It keeps
// at most limit bytes; the write that would pass the limit fails, and full
// is called to end the run.
type testOutput struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	over  bool
	full  func()
}

var errTestOutputFull = errors.New("nspl test: the script's output is over its limit")

func (o *testOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.over || o.buf.Len()+len(p) > o.limit {
		if !o.over {
			o.over = true
			o.full()
		}
		return 0, errTestOutputFull
	}
	return o.buf.Write(p)
}

func (o *testOutput) overflowed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.over
}

func (o *testOutput) Bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}

func (o *testOutput) String() string { return string(o.Bytes()) }

// The JUnit XML report: one testsuite, one testcase per script, a failure
// carrying the diff and an error why a script could not run.
type (
	junitReport struct {
		XMLName xml.Name     `xml:"testsuites"`
		Suites  []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		Skipped   *junitProblem `xml:"skipped,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// writeJUnit writes the report to --junit's file, crash-safely.
func (t *testRun) writeJUnit(elapsed time.Duration) error {
	suite := junitSuite{Name: "nspl test", Time: seconds(elapsed)}
	for _, c := range t.cases {
		name := filepath.ToSlash(c.path)
		jc := junitCase{Name: name, Classname: filepath.ToSlash(filepath.Dir(c.path)), Time: seconds(c.elapsed)}
		switch c.status {
		case testFailed:
			suite.Failures++
			msg := fmt.Sprintf("output differs from %s at line %d", filepath.ToSlash(c.outPath()), c.line)
			jc.Failure = &junitProblem{Message: msg, Text: string(c.diff) + fmt.Sprintf("%s:%d: first difference\n", c.outPath(), c.line)}
		case testCannotRun:
			suite.Errors++
			jc.Error = &junitProblem{Message: firstLine(c.reason), Text: c.reason}
		case testNotRun:
			suite.Skipped++
			jc.Skipped = &junitProblem{Message: "not run: interrupted"}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	suite.Tests = len(suite.Cases)
	b, err := xml.MarshalIndent(junitReport{Suites: []junitSuite{suite}}, "", "  ")
	if err != nil {
		return err
	}
	b = append(append([]byte(xml.Header), b...), '\n')
	return atomicfile.WriteFile(t.opts.junit, b, 0o644)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
