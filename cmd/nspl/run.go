package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/chzyer/readline"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// Main is one invocation of nspl with its I/O injected, so tests can run it
// in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads the environment (NSPL_HISTORY, HOME); nil reads
	// nothing.
	LookupEnv func(string) (string, bool)
	// Interrupts delivers Ctrl-C while no line is being edited; nil means
	// none arrive.
	Interrupts <-chan os.Signal
	// StdinIsTerminal reports whether Stdin is an interactive terminal;
	// nil means it is when Stdin is a terminal *os.File.
	StdinIsTerminal func() bool

	// TimeSource arms the nspl clock --timeout timer (nil means the node's),
	// nspl serve's --drain-timeout timer (nil means the system clock), and
	// is what the shell's \timing measures with (nil means the node's).
	TimeSource timesource.Source

	// getuid is the uid of the user nspl runs as, whose config file it
	// trusts; nil is os.Getuid.
	getuid func() int

	// openEditor opens the shell's line editor; nil opens readline on the
	// terminal. Tests replace it to type lines without a terminal.
	openEditor func(complete completer) (noticeEditor, error)

	intrMu sync.Mutex
	onIntr func() // what Ctrl-C does now; nil ignores it

	// scriptName names a -f file in diagnostics; nil names it by its path.
	// nspl test names each script by its base name, as when it runs in
	// its own directory, so its expected output does not depend on where
	// nspl test runs.
	scriptName func(path string) string

	noticeMu sync.Mutex
	noticeTo func(line string) // where notices go now; nil: Stderr
}

// notice prints one line the remote client reports on its own: above the
// prompt while the shell edits a line, else on Stderr. It never waits for
// the shell's output lock, since the client reports from inside a running
// statement's request.
func (m *Main) notice(line string) {
	line = termSafe(line) // it names the node a server says it is
	m.noticeMu.Lock()
	to := m.noticeTo
	m.noticeMu.Unlock()
	if to != nil {
		to(line)
		return
	}
	fmt.Fprintln(m.Stderr, line)
}

// setNoticePrinter routes notices to print until the returned func
// restores the previous route.
func (m *Main) setNoticePrinter(print func(line string)) (restore func()) {
	m.noticeMu.Lock()
	prev := m.noticeTo
	m.noticeTo = print
	m.noticeMu.Unlock()
	return func() {
		m.noticeMu.Lock()
		m.noticeTo = prev
		m.noticeMu.Unlock()
	}
}

// Run runs nspl with args (without the program name) on the process's
// signals and environment. It returns nil on success; an error's exit code is
// ExitCode(err).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	m := &Main{Stdin: stdin, Stdout: stdout, Stderr: stderr, LookupEnv: os.LookupEnv, Interrupts: sig}
	return m.Run(ctx, args)
}

// Run runs one invocation.
func (m *Main) Run(ctx context.Context, args []string) (err error) {
	if len(args) > 0 && args[0] == "cert" {
		return m.runCert(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "fmt" {
		return m.runFmt(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "test" {
		return m.runTest(ctx, args[1:])
	}
	opts, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		return m.printHelp(err)
	}
	if err != nil {
		return err
	}
	switch {
	case opts.tool.active() && opts.tool.suggest == nil:
		return m.runTool(ctx, opts)
	case opts.serve != nil:
		return m.runServe(ctx, opts.serve)
	}
	if err := m.resolveRemote(&opts.remote); err != nil {
		return err
	}
	if opts.tool.active() { // --suggest, which may ask the node for domain names
		return m.runTool(ctx, opts)
	}
	if opts.lsp {
		return m.runLSP(ctx, opts)
	}
	if opts.admin != nil {
		if opts.remote.connect == "" {
			return usageErrorf("%s: --connect URL is required: the node to ask", opts.admin.name)
		}
		return m.runAdmin(ctx, opts)
	}
	if err := checkVirtualTime(&opts); err != nil {
		return err
	}
	interactive := len(opts.sources) == 0 && !opts.subcommand() && m.stdinIsTerminal()
	if opts.console != "" {
		switch {
		case opts.remote.connect != "":
			return usageErrorf("--console serves an embedded node's console; a node that nspl serve runs serves its own at https://HOST:PORT/console/, so drop --console or --connect")
		case opts.subcommand() || !interactive:
			return usageErrorf("--console serves the console while the interactive shell runs; start nspl in a terminal without -c, -f or a subcommand")
		}
		if err := wire.CheckLoopback(opts.console); err != nil {
			return usageErrorf("--console %s: %v", opts.console, err)
		}
	}
	if len(opts.sources) == 0 && !opts.subcommand() && !interactive {
		opts.sources = []scriptSource{{kind: sourceStdin}}
	}
	if opts.singleTransaction && len(opts.sources) == 0 {
		return usageErrorf("-1 (--single-transaction) runs the input of -c, -f or piped stdin as one transaction; in the shell, type BEGIN; and COMMIT;")
	}
	scripts, err := m.readSources(opts.sources)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopIntr := m.routeInterrupts(ctx)
	defer stopIntr()
	// Until a mode sets its own, Ctrl-C abandons the run.
	defer m.setInterruptHandler(cancel)()

	sess, src, closeSession, err := m.openSession(ctx, opts)
	if err != nil {
		return err
	}
	defer closeSession()

	r := &runner{exec: sess, stdout: m.Stdout, stderr: m.Stderr, format: opts.format, echo: opts.echo, quiet: opts.quiet, outMu: new(sync.Mutex), clock: src}
	if m.TimeSource != nil && !opts.virtualTime {
		r.clock = m.TimeSource // \timing and \watch use the injected clock
	}
	r.vars = opts.vars
	if vs, ok := sess.(virtualSession); ok && opts.virtualTime {
		r.virtual = vs
	}
	if opts.output != "" {
		f, err := openResultFile(opts.output)
		if err != nil {
			return ioError(fmt.Errorf("-o: %w", err))
		}
		r.results = f
	}
	defer func() {
		if cerr := r.closeResults(); cerr != nil && err == nil {
			err = ioError(cerr)
		}
	}()
	if opts.singleTransaction {
		r.singleTx = &singleTransaction{}
	}
	if len(scripts) > 0 {
		if err := m.runScripts(ctx, r, scripts, opts.continueOnError); err != nil {
			return err
		}
	}
	switch {
	case opts.archive != nil:
		return m.runArchive(ctx, r, opts.archive)
	case opts.clock:
		if m.TimeSource != nil && !opts.virtualTime {
			src = m.TimeSource
		}
		return m.followClock(ctx, sess, src, opts)
	case interactive:
		return m.runShell(ctx, r, sess)
	}
	return nil
}

// script is one source read into memory.
type script struct {
	name string
	text string
}

// readSources reads every script before any statement runs, so a missing
// file fails the run (exit 3) before it changes anything.
func (m *Main) readSources(sources []scriptSource) ([]script, error) {
	out := make([]script, 0, len(sources))
	stdinUsed := false
	commands := 0
	for _, src := range sources {
		switch src.kind {
		case sourceCommand:
			// The first -c is named -c in diagnostics, later ones -c#2, -c#3…
			commands++
			name := src.name()
			if commands > 1 {
				name += "#" + strconv.Itoa(commands)
			}
			out = append(out, script{name: name, text: src.arg})
		case sourceStdin:
			if stdinUsed {
				return nil, usageErrorf("stdin (-f -) can be read only once")
			}
			stdinUsed = true
			b, err := readLimited(m.Stdin, maxScriptBytes, "the script on stdin")
			if err != nil {
				return nil, ioError(fmt.Errorf("read stdin: %w", err))
			}
			out = append(out, script{name: src.name(), text: string(b)})
		default:
			b, err := readFileLimited(src.arg, maxScriptBytes)
			if err != nil {
				return nil, ioError(fmt.Errorf("read script: %w", err))
			}
			name := src.name()
			if m.scriptName != nil {
				name = m.scriptName(src.arg)
			}
			out = append(out, script{name: name, text: string(b)})
		}
	}
	return out, nil
}

// runScripts runs the scripts in order. Clock events of attachments a
// script makes are not printed (use nspl clock to follow a clock), so a
// script's output does not depend on timing; the session's follow coalesces
// them unread, so nothing waits for a reader.
func (m *Main) runScripts(ctx context.Context, r *runner, scripts []script, keepGoing bool) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer m.setInterruptHandler(cancel)()

	failed := 0
	for _, s := range scripts {
		out, err := r.runSource(runCtx, s.name, s.text, keepGoing && r.singleTx == nil)
		if err != nil {
			return err
		}
		failed += out.failed
		if out.interrupted {
			return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
		}
		if out.quit || out.failed > 0 && (!keepGoing || r.singleTx != nil) {
			break
		}
	}
	if ok, err := r.endSingleTransaction(runCtx, failed > 0); err != nil {
		return err
	} else if !ok {
		failed++
	}
	if failed > 0 {
		return &RunError{Kind: ErrStatementFailed, Err: fmt.Errorf("%d statement(s) failed", failed), Reported: true}
	}
	return nil
}

// runShell runs the interactive shell on the terminal.
func (m *Main) runShell(ctx context.Context, r *runner, sess sessionBackend) error {
	sh := &shell{sess: sess, run: r, stderr: m.Stderr}
	comp := statementCompleter{
		pending: sh.pendingText,
		domains: func() []string {
			names, _ := sess.DomainNames(ctx) // completion offers none on failure
			return names
		},
	}
	var ed noticeEditor
	var err error
	if m.openEditor != nil {
		ed, err = m.openEditor(comp)
	} else {
		ed, err = newReadlineEditor(m.Stdin, m.Stdout, m.Stderr, m.historyPath(), comp, colourModeFor(m.lookupEnv))
	}
	if err != nil {
		return ioError(fmt.Errorf("open the terminal: %w", err))
	}
	defer ed.Close()
	sh.editor = ed
	r.stdout = ed.Output()
	defer m.setNoticePrinter(ed.PrintNoticeAbove)()
	defer m.setInterruptHandler(sh.interrupt)()
	if !r.quiet {
		fmt.Fprintln(r.stdout, `nspl shell: statements end with ';'. Type help for help, exit or Ctrl-D to leave.`)
	}
	return sh.loop(ctx)
}

// historyPath is NSPL_HISTORY when it is set (an empty value keeps no
// history), otherwise ~/.nspl_history.
func (m *Main) historyPath() string {
	if p, ok := m.lookupEnv("NSPL_HISTORY"); ok {
		return p
	}
	home, _ := m.lookupEnv("HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".nspl_history")
}

func (m *Main) uid() int {
	if m.getuid != nil {
		return m.getuid()
	}
	return os.Getuid()
}

func (m *Main) lookupEnv(key string) (string, bool) {
	if m.LookupEnv == nil {
		return "", false
	}
	return m.LookupEnv(key)
}

func (m *Main) stdinIsTerminal() bool {
	if m.StdinIsTerminal != nil {
		return m.StdinIsTerminal()
	}
	f, ok := m.Stdin.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// logger returns the node's logger: warnings and errors only, unless
// --verbose asks for everything.
func (m *Main) logger(verbose bool) *slog.Logger {
	level := slog.LevelError
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: level}))
}

func (m *Main) raftLevel(verbose bool) slog.Level {
	if verbose {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// routeInterrupts delivers each interrupt to the current handler until ctx
// ends; the returned function stops the router and waits for it.
func (m *Main) routeInterrupts(ctx context.Context) func() {
	if m.Interrupts == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-m.Interrupts:
				m.intrMu.Lock()
				h := m.onIntr
				m.intrMu.Unlock()
				if h != nil {
					h()
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// setInterruptHandler makes h what Ctrl-C does and returns the function
// that restores the handler before it.
func (m *Main) setInterruptHandler(h func()) (restore func()) {
	m.intrMu.Lock()
	prev := m.onIntr
	m.onIntr = h
	m.intrMu.Unlock()
	return func() {
		m.intrMu.Lock()
		m.onIntr = prev
		m.intrMu.Unlock()
	}
}

// Bounds on the files and streams the command reads whole.
const (
	maxScriptBytes = 16 << 20 // a script given with -f or on stdin
	maxTokenBytes  = 4 << 10  // a bearer token file
)

// readLimited reads r to its end, refusing it when it holds more than limit
// bytes rather than reading an unbounded input into memory.
func readLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes; split it or shorten it", what, limit)
	}
	return b, nil
}

// readFileLimited reads the file at path, refusing it when it holds more
// than limit bytes.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, limit, fmt.Sprintf("file %q", path))
}
