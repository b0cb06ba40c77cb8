package main

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// daemonCmds start a process in the background that a script can signal
// with any signal and whose exit code it can check; testscript's own
// background commands take only SIGINT and SIGKILL.
//
//	daemon NAME cmd args...   start cmd, output in $WORK/NAME.out and .err
//	signal NAME TERM|INT      send the signal to NAME
//	waitexit NAME CODE        wait up to a minute for NAME to exit with CODE
var daemonCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"daemon":   cmdDaemon,
	"signal":   cmdSignal,
	"waitexit": cmdWaitExit,
}

var (
	daemonsMu sync.Mutex
	daemons   = map[*testscript.TestScript]map[string]*daemonProc{}
)

type daemonProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func daemonOf(ts *testscript.TestScript, name string) *daemonProc {
	daemonsMu.Lock()
	defer daemonsMu.Unlock()
	d := daemons[ts][name]
	if d == nil {
		ts.Fatalf("no daemon %q", name)
	}
	return d
}

func cmdDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: daemon NAME cmd args...")
	}
	name := args[0]
	path, err := exec.LookPath(args[1]) // testscript.Main put its commands on PATH
	ts.Check(err)
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".err"))
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	d := &daemonProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		_ = out.Close()
		_ = errf.Close()
		close(d.done)
	}()
	daemonsMu.Lock()
	if daemons[ts] == nil {
		daemons[ts] = map[string]*daemonProc{}
	}
	daemons[ts][name] = d
	daemonsMu.Unlock()
	ts.Defer(func() {
		select {
		case <-d.done:
		default:
			_ = cmd.Process.Kill()
			<-d.done
		}
		daemonsMu.Lock()
		delete(daemons[ts], name)
		daemonsMu.Unlock()
	})
}

// scriptEnv is the script's environment for a process it starts.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "GOCOVERDIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME TERM|INT|STOP|CONT")
	}
	sig := map[string]os.Signal{"TERM": syscall.SIGTERM, "INT": os.Interrupt, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}[args[1]]
	if sig == nil {
		ts.Fatalf("signal: unknown signal %q", args[1])
	}
	ts.Check(daemonOf(ts, args[0]).cmd.Process.Signal(sig))
}

func cmdWaitExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitexit NAME CODE")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	d := daemonOf(ts, args[0])
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		ts.Fatalf("waitexit: %s did not exit within a minute", args[0])
	}
	got := d.cmd.ProcessState.ExitCode()
	if got != want {
		ts.Logf("%s stderr:\n%s", args[0], ts.ReadFile(args[0]+".err"))
		ts.Fatalf("waitexit: %s exited with %d (%v), want %d", args[0], got, d.err, want)
	}
}
