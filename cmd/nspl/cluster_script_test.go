package main

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// clusterCmds are the testscript commands the cluster scripts use to drive
// background nspl serve processes:
//
//	freeport VAR...                      set each VAR to a free loopback port
//	                                     below the ephemeral range
//	waitfor TIMEOUT REGEXP cmd args...   rerun cmd until it succeeds with
//	                                     stdout matching REGEXP
//	fetch [-status N] [-host H] URL      a GET of URL (Host header H) whose
//	                                     body is stdout
//	capture VAR REGEXP                   set VAR to REGEXP's first group in
//	                                     the last stdout
var clusterCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"freeport": cmdFreePort,
	"waitfor":  cmdWaitFor,
	"capture":  cmdCapture,
	"fetch":    cmdFetch,
}

// Ports freeport hands out lie below Linux's ephemeral range (32768 and
// up by default): a port the kernel picked for a listener and freed is soon
// reused as the source port of some outgoing connection, and the process
// meant to bind it then fails with "address already in use".
const (
	freePortLow  = 20000
	freePortHigh = 32000
)

var (
	freePortMu   sync.Mutex
	freePortNext = freePortLow + rand.IntN(freePortHigh-freePortLow)
	// freePortGiven keeps scripts running in parallel from being handed
	// the same port.
	freePortGiven = map[int]bool{}
)

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: freeport VAR...")
	}
	freePortMu.Lock()
	defer freePortMu.Unlock()
	for _, v := range args {
		port := 0
		for tries := 0; tries < freePortHigh-freePortLow && port == 0; tries++ {
			p := freePortNext
			freePortNext++
			if freePortNext == freePortHigh {
				freePortNext = freePortLow
			}
			if freePortGiven[p] {
				continue
			}
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				continue // taken by something else
			}
			_ = l.Close()
			freePortGiven[p] = true
			port = p
		}
		if port == 0 {
			ts.Fatalf("freeport: no free loopback port in %d-%d", freePortLow, freePortHigh)
		}
		ts.Setenv(v, strconv.Itoa(port))
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

// cmdFetch is fetch [-status N] [-host H] URL: a GET of URL, with Host
// header H when given, without following redirects, whose body becomes
// stdout; it fails unless the status is N (default 200).
func cmdFetch(ts *testscript.TestScript, neg bool, args []string) {
	want, host := http.StatusOK, ""
	for len(args) == 3 || len(args) == 5 {
		switch args[0] {
		case "-status":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			want = n
		case "-host":
			host = args[1]
		default:
			ts.Fatalf("usage: fetch [-status N] [-host HOST] URL")
		}
		args = args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fetch [-status N] [-host HOST] URL")
	}
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(http.MethodGet, args[0], nil)
	ts.Check(err)
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	_, _ = ts.Stdout().Write(b)
	if resp.StatusCode != want {
		ts.Fatalf("fetch %s: status %d, want %d", args[0], resp.StatusCode, want)
	}
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
