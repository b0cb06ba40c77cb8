package main

import (
	"net"
	"regexp"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// clusterCmds are the testscript commands the cluster scripts use to drive
// background nspl serve processes:
//
//	freeport VAR...                      set each VAR to a free loopback port
//	waitfor TIMEOUT REGEXP cmd args...   rerun cmd until it succeeds with
//	                                     stdout matching REGEXP
//	capture VAR REGEXP                   set VAR to REGEXP's first group in
//	                                     the last stdout
var clusterCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"freeport": cmdFreePort,
	"waitfor":  cmdWaitFor,
	"capture":  cmdCapture,
}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: freeport VAR...")
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for _, v := range args {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		held = append(held, l) // held until all are chosen, so they differ
		ts.Setenv(v, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
}

// waitPoll is how often waitfor reruns its command: it waits for other
// processes, not for time.
const waitPoll = 100 * time.Millisecond

func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: waitfor TIMEOUT REGEXP cmd args...")
	}
	timeout, err := time.ParseDuration(args[0])
	ts.Check(err)
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(timeout)
	var last error
	for {
		last = ts.Exec(args[2], args[3:]...)
		if last == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Logf("last stdout:\n%s\nlast stderr:\n%s", ts.ReadFile("stdout"), ts.ReadFile("stderr"))
			ts.Fatalf("waitfor: %q did not succeed with stdout matching %q within %s (last error: %v)", args[2], args[1], timeout, last)
		}
		time.Sleep(waitPoll)
	}
}

func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: capture VAR REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("capture: %q has no match with a group in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}

// withClusterCmds adds clusterCmds to cmds.
func withClusterCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for k, v := range clusterCmds {
		cmds[k] = v
	}
	for k, v := range daemonCmds {
		cmds[k] = v
	}
	return cmds
}
