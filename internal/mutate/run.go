package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// results maps a test (TestX or TestX/sub) to how it ended in one run:
// "pass", "fail" or "skip". A test that started and never ended (the
// binary timed out or crashed) is absent.
type results map[string]string

// testEvent is the part of a `go test -json` event the tool reads.
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// goTester runs `go test` for one package of the module copy in dir.
type goTester struct {
	dir     string // the root of a module copy
	timeout time.Duration
}

// run runs the named top-level tests of pkg (a directory relative to the
// module root). It reports each test's end, whether the package did not
// build, and the output of a failed build.
func (g goTester) run(ctx context.Context, pkg string, tops []string) (results, bool, string, error) {
	pattern := "^(" + strings.Join(quoteAll(tops), "|") + ")$"
	args := []string{"test", "-json", "-count=1", "-timeout", g.timeout.String(), "-run", pattern}
	args = append(args, "./"+strings.TrimPrefix(pkg, "."))
	if pkg == "." {
		args[len(args)-1] = "."
	}
	// The go command's own deadline sits past the test binary's, so a hung
	// build or a binary that ignores its -timeout still ends.
	ctx, cancel := context.WithTimeout(ctx, g.timeout+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, false, "", fmt.Errorf("go %s: %w", strings.Join(args, " "), ctx.Err())
	}
	res := results{}
	buildFailed := false
	var buildOut, tail strings.Builder
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev testEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // go test prints a plain line for some failures; stderr tells
		}
		switch {
		case ev.Action == "build-output":
			buildOut.WriteString(ev.Output)
		case ev.Action == "build-fail" || ev.FailedBuild != "":
			buildFailed = true
		case ev.Test != "" && (ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip"):
			res[ev.Test] = ev.Action
		case ev.Action == "output":
			tail.WriteString(ev.Output)
		}
	}
	if strings.Contains(stderr.String(), "[setup failed]") || strings.Contains(stdout.String(), "[setup failed]") {
		buildFailed = true
	}
	buildOut.WriteString(stderr.String())
	if runErr != nil && !buildFailed {
		// A binary that crashed or timed out reports no result for the
		// tests after; what it printed last says why.
		buildOut.WriteString(lastLines(tail.String(), 60))
	}
	if runErr != nil && len(res) == 0 && !buildFailed {
		var exitErr *exec.ExitError
		if !errors.As(runErr, &exitErr) {
			return nil, false, "", fmt.Errorf("go %s: %w", strings.Join(args, " "), runErr)
		}
	}
	return res, buildFailed, buildOut.String(), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = regexp.QuoteMeta(n)
	}
	return out
}

// byPackage groups tests by package, each package's top-level tests
// sorted and without repeats.
func byPackage(refs []testRef) (pkgs []string, tops map[string][]string) {
	tops = map[string][]string{}
	for _, r := range refs {
		if !slices.Contains(tops[r.pkg], r.top()) {
			tops[r.pkg] = append(tops[r.pkg], r.top())
		}
	}
	for p := range tops {
		pkgs = append(pkgs, p)
		slices.Sort(tops[p])
	}
	slices.Sort(pkgs)
	return pkgs, tops
}

// scratchCopy copies the module's files (those git tracks, and the
// untracked ones it does not ignore, as they are in the work tree) into a
// new folder and returns it. Tests that read source files see a mutation
// there exactly as the compiler does; the work tree itself is never
// written. A copy keeps its path for the whole run, so the build cache
// serves every package a mutation does not touch.
func scratchCopy(root string) (string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("listing the module's files with git: %w", err)
	}
	dir, err := os.MkdirTemp("", "nspl-mutate-")
	if err != nil {
		return "", err
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted in the work tree, not yet in git
			}
			return dir, err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		body, err := os.ReadFile(src)
		if err != nil {
			return dir, err
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(dst, body, info.Mode().Perm()); err != nil {
			return dir, err
		}
	}
	return dir, nil
}

// mutateIn makes m in the copy dir and returns a function that restores
// the file.
func mutateIn(dir string, m *mutation) (restore func() error, err error) {
	path := filepath.Join(dir, filepath.FromSlash(m.file))
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.source, err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.source, err)
	}
	mutated, err := m.apply(string(src))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(mutated), info.Mode().Perm()); err != nil {
		return nil, err
	}
	return func() error { return os.WriteFile(path, src, info.Mode().Perm()) }, nil
}
