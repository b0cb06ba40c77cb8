//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// expectTimeout bounds each wait for output from the shell. It is a bound on
// a failure, not a wait for time to pass: every wait ends as soon as the
// expected text arrives.
const expectTimeout = 20 * time.Second

// openPTY opens a pseudo-terminal pair with the ioctls Linux uses: the
// master end for the test, the slave end for the shell.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 200}))
	return m, s
}

// screen collects everything the shell writes to the terminal.
type screen struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newScreen() *screen { return &screen{changed: make(chan struct{})} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

// text returns the output so far.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the output after offset from holds want, and returns
// the offset just past it.
func (s *screen) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.NewTimer(expectTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		out := s.buf.String()
		ch := s.changed
		s.mu.Unlock()
		if from <= len(out) {
			if i := strings.Index(out[from:], want); i >= 0 {
				return from + i + len(want)
			}
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %q in the terminal output after byte %d; the output was:\n%s", want, from, out)
		}
	}
}

// TestTerminal drives the interactive shell on a pseudo-terminal: a
// multi-line statement, Tab completion of a keyword and a domain name, clock
// frames arriving while a line is typed (the line is redrawn intact and the
// frames never precede the ATTACH reply), Ctrl-C clearing the line without
// leaving the shell, history saved per statement, and Ctrl-D leaving.
func TestTerminal(t *testing.T) {
	defer goleak.VerifyNone(t)
	bin, err := exec.LookPath("nspl")
	require.NoError(t, err, "TestMain installs nspl on PATH")
	master, slave := openPTY(t)
	defer master.Close()

	history := filepath.Join(t.TempDir(), "history")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NSPL_HISTORY="+history, "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	slave.Close()

	scr := newScreen()
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				scr.Write(buf[:n])
			}
			if err != nil {
				return // EIO once the shell has exited
			}
		}
	}()
	exited := make(chan struct{}) // closed once the shell has exited
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
		master.Close()
		readers.Wait()
	}()
	typeText := func(s string) {
		t.Helper()
		_, err := master.WriteString(s)
		require.NoError(t, err)
	}

	at := scr.waitFor(t, 0, "nspl> ")

	// A statement over two lines: the continuation prompt, then the reply.
	typeText("CREATE PACED DOMAIN prod\r")
	at = scr.waitFor(t, at, "...> ")
	typeText("  WITH PERIOD 100ms SKEW 10ms;\r")
	at = scr.waitFor(t, at, "created domain 'prod'")
	at = scr.waitFor(t, at, "nspl> ")

	// Tab completes the keyword USE and the domain name prod.
	typeText("US\t")
	at = scr.waitFor(t, at, "USE ")
	typeText("pr\t")
	at = scr.waitFor(t, at, "prod ")
	typeText(";\r")
	at = scr.waitFor(t, at, "using domain 'prod'")
	at = scr.waitFor(t, at, "nspl[prod]> ")

	typeText("START AT '2030-01-01T00:00:00Z' TIME RATE 1;\r")
	at = scr.waitFor(t, at, "started domain 'prod'")
	at = scr.waitFor(t, at, "nspl[prod]> ")

	// The ATTACH reply comes first, then frames above the prompt.
	typeText("ATTACH DOMAIN CLOCK;\r")
	replyAt := scr.waitFor(t, at, "attached to the clock of domain 'prod'")
	frameAt := scr.waitFor(t, at, "[clock prod] tick ")
	require.Less(t, replyAt, frameAt, "a frame was printed before the ATTACH reply")
	at = scr.waitFor(t, frameAt, " (generation 1)")

	// Frames keep arriving while a line is being typed; each one redraws
	// the prompt and the partial line below it.
	typeText("LIST DOM")
	at = scr.waitFor(t, at, "nspl[prod]> LIST DOM")
	for range 2 {
		at = scr.waitFor(t, at, "[clock prod] tick ")
		at = scr.waitFor(t, at, "nspl[prod]> LIST DOM")
	}
	typeText("AINS;\r")
	at = scr.waitFor(t, at, "1 domain")

	// Ctrl-C clears the line being typed and the shell goes on.
	typeText("DROP DOMAIN prod")
	at = scr.waitFor(t, at, "DROP DOMAIN prod")
	typeText("\x03")
	at = scr.waitFor(t, at, "^C")
	typeText("DETACH DOMAIN CLOCK;\r")
	at = scr.waitFor(t, at, "detached from the clock of domain 'prod'")
	at = scr.waitFor(t, at, "nspl[prod]> ")
	require.NotContains(t, scr.text(), "dropped domain")

	// A transaction shows its mark in the prompt.
	typeText("BEGIN;\r")
	at = scr.waitFor(t, at, "nspl[prod]*> ")
	typeText("REVERT;\r")
	at = scr.waitFor(t, at, "reverted transaction")

	typeText("help\r")
	at = scr.waitFor(t, at, "Statements (end each with ;):")

	// Ctrl-D on an empty line leaves with exit status 0.
	scr.waitFor(t, at, "nspl[prod]> ")
	typeText("\x04")
	select {
	case <-exited:
		require.NoError(t, waitErr)
	case <-time.After(expectTimeout):
		t.Fatal("the shell did not exit on Ctrl-D")
	}

	b, err := os.ReadFile(history)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Contains(t, lines, "CREATE PACED DOMAIN prod WITH PERIOD 100ms SKEW 10ms;")
	require.Contains(t, lines, "USE prod ;")
	require.NotContains(t, string(b), "DROP DOMAIN")
}

// ptyShell is nspl's interactive shell on a pseudo-terminal.
type ptyShell struct {
	scr      *screen
	typeText func(s string)
	exited   chan struct{}
	waitErr  *error
}

// startPTYShell starts the installed nspl on a pseudo-terminal with env
// added to the environment; the test's cleanup kills it if it still runs.
func startPTYShell(t *testing.T, env ...string) *ptyShell {
	t.Helper()
	bin, err := exec.LookPath("nspl")
	require.NoError(t, err, "TestMain installs nspl on PATH")
	master, slave := openPTY(t)
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), "NSPL_HISTORY="), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	slave.Close()
	p := &ptyShell{scr: newScreen(), exited: make(chan struct{}), waitErr: new(error)}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				p.scr.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		*p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		master.Close()
		readers.Wait()
	})
	p.typeText = func(s string) {
		t.Helper()
		_, err := master.WriteString(s)
		require.NoError(t, err)
	}
	return p
}

// TestTabMenuColour opens the Tab menu and chooses in it: readline marks
// the chosen candidate black on white, which NO_COLOR turns into reverse
// video (an attribute, no colour) and TERM=dumb into no escape at all.
func TestTabMenuColour(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name             string
		env              []string
		colour, reversed bool
	}{
		{name: "colour allowed", env: []string{"TERM=xterm", "NO_COLOR="}, colour: true},
		{name: "NO_COLOR", env: []string{"TERM=xterm", "NO_COLOR=1"}, reversed: true},
		{name: "TERM=dumb", env: []string{"TERM=dumb", "NO_COLOR="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := startPTYShell(t, tc.env...)
			at := sh.scr.waitFor(t, 0, "nspl> ")
			sh.typeText("CREATE DOMAIN ab; CREATE DOMAIN ac;\r")
			at = sh.scr.waitFor(t, at, "created domain 'ac'")
			at = sh.scr.waitFor(t, at, "nspl> ")
			menuAt := at
			sh.typeText("USE a\t") // two candidates: the menu
			at = sh.scr.waitFor(t, at, "ac")
			sh.typeText("\t") // the same line again: choose in the menu
			at = sh.scr.waitFor(t, at, "ac")
			sh.typeText("\r;\r") // take the chosen one
			at = sh.scr.waitFor(t, at, "using domain 'ab'")
			menu := sh.scr.text()[menuAt:at]
			require.Equal(t, tc.colour, strings.Contains(menu, "\x1b[30;47m"), "the black-on-white highlight in %q", menu)
			require.Equal(t, tc.reversed, strings.Contains(menu, "\x1b[7m"), "reverse video in %q", menu)
			if !tc.colour {
				require.NotRegexp(t, `\x1b\[[0-9;]*(3|4|9|10)[0-9](;[0-9;]*)?m`, menu, "no colour sequence")
			}
			if !tc.colour && !tc.reversed {
				require.NotRegexp(t, `\x1b\[[0-9;]*m`, menu, "no SGR sequence on a dumb terminal")
			}
			sh.scr.waitFor(t, at, "nspl[ab]> ")
			sh.typeText("\x04")
			select {
			case <-sh.exited:
				require.NoError(t, *sh.waitErr)
			case <-time.After(expectTimeout):
				t.Fatal("the shell did not exit on Ctrl-D")
			}
		})
	}
}
