package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"
)

var updateScripts = flag.Bool("update", false, "rewrite the expected output in testdata/script from the actual output")

// TestMain makes the test binary double as nspl: testscript installs it on
// PATH under that name, and scripts run it as a separate process. The
// package fails when its tests leave a goroutine running.
func TestMain(m *testing.M) {
	testscript.Main(leakCheckedM{m}, map[string]func(){"nspl": main})
}

// leakCheckedM runs the tests, then fails them if goroutines remain.
type leakCheckedM struct{ m *testing.M }

func (l leakCheckedM) Run() int {
	code := l.m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			return 1
		}
	}
	return code
}

// TestScripts runs every testdata/script/*.txtar against the real binary.
// Besides the standard commands, scripts have
//
//	exitcode N nspl ARGS...   run nspl and require exit code N
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("NSPL_HISTORY", "")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: withClusterCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitCode,
			"shell":       cmdShell,
			"hostilenode": cmdHostileNode,
		}),
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}
