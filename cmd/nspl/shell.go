package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
)

// shellSession is what the shell needs from a session.
type shellSession interface {
	statementExecutor
	NextEvent(ctx context.Context) (follow.ClockEvent, error)
	ActiveDomain() string
	InTransaction() (domain string, pending int, ok bool)
}

// promptContinuation is the prompt while a statement continues; promptFor
// gives the others.
const promptContinuation = "...> "

// shell is the interactive loop: it reads lines, runs each complete
// statement and prints clock events above the prompt.
type shell struct {
	sess   shellSession
	editor lineEditor
	run    *runner
	stderr io.Writer

	mu      sync.Mutex
	pending string             // the unfinished statement entered so far
	cancel  context.CancelFunc // cancels the running statement; nil when idle
}

// prompt returns the prompt for the next line.
func (s *shell) prompt() string {
	if s.pendingText() != "" {
		return promptContinuation
	}
	return mainPrompt(s.sess)
}

func mainPrompt(sess shellSession) string {
	_, _, tx := sess.InTransaction()
	return promptFor(sess.ActiveDomain(), tx)
}

// promptFor is nspl> without an active domain, nspl[<domain>]> with one, and
// gains a * before the > while a transaction is open.
func promptFor(active string, inTx bool) string {
	p := "nspl"
	if active != "" {
		p += "[" + termSafe(grammar.FormatName(active)) + "]" // the server names the active domain
	}
	if inTx {
		p += "*"
	}
	return p + "> "
}

func (s *shell) pendingText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

func (s *shell) setPending(text string) {
	s.mu.Lock()
	s.pending = text
	s.mu.Unlock()
}

// interrupt cancels the running statement, if any. It is what Ctrl-C does
// while a statement runs (the terminal is not in raw mode then, so Ctrl-C
// arrives as a signal); while a line is edited Ctrl-C clears it instead.
func (s *shell) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

// loop runs the shell until exit, Ctrl-D or a terminal failure. Clock
// events are printed by a goroutine loop owns (on real time only): it is
// stopped and waited for before loop returns.
func (s *shell) loop(ctx context.Context) error {
	eventCtx, stopEvents := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if s.run.virtual != nil {
			// Under virtual time a wait moves the clock, so nothing
			// waits in the background: the runner prints what arrived
			// after each statement and during \sleep and \wait.
			return
		}
		s.printEvents(eventCtx)
	}()
	defer func() {
		stopEvents()
		wg.Wait()
	}()

	out := s.editor.Output()
	for {
		line, err := s.editor.ReadLine(s.prompt())
		switch {
		case errors.Is(err, errLineInterrupted):
			s.setPending("")
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return ioError(fmt.Errorf("read the terminal: %w", err))
		}
		pending := s.pendingText()
		if pending == "" {
			if cmd, ok := parseMeta(line); ok {
				leave, err := s.runMeta(ctx, out, cmd)
				if err != nil || leave {
					return err
				}
				continue
			}
		}
		text := line
		if pending != "" {
			text = pending + "\n" + line
		}
		ready, rest := cutStatements(text)
		s.setPending(rest)
		if len(ready.Statements) == 0 {
			continue
		}
		if err := s.execute(ctx, ready); err != nil {
			return err
		}
	}
}

// cutStatements splits entered text once into what is ready to run (every
// statement up to the last ';' outside strings and comments, with the text
// they were cut from) and what must wait for more lines. Blank text and
// lone comments are dropped.
func cutStatements(text string) (ready grammar.Script, rest string) {
	sc := grammar.Split(text)
	if sc.Err != nil {
		// An unterminated string, quoted name or block comment: wait.
		return grammar.Script{}, text
	}
	n := len(sc.Statements)
	if n > 0 && !sc.Statements[n-1].Terminated {
		n-- // only the last statement can lack its ';'
	}
	switch {
	case n == 0 && len(sc.Statements) == 0:
		return grammar.Script{}, "" // nothing but white space and comments
	case n == 0:
		return grammar.Script{}, text
	case n == len(sc.Statements):
		return sc, "" // the comments after the last ';' belong to it
	default:
		tail := sc.Statements[n]
		sc.Statements = sc.Statements[:n]
		sc.Text = text[:sc.Statements[n-1].End.Offset]
		return sc, text[tail.Start.Offset:]
	}
}

// execute runs ready, which holds one or more complete statements, saving
// each statement to the history first, one entry per statement however many
// lines it spanned. Ctrl-C cancels it through interrupt.
func (s *shell) execute(ctx context.Context, ready grammar.Script) error {
	for _, st := range ready.Statements {
		if err := s.editor.SaveHistory(historyEntry(st.Text)); err != nil {
			fmt.Fprintf(s.stderr, "warning: cannot save history: %v\n", err)
			break
		}
	}
	return s.runCancellable(ctx, "", ready)
}

// runCancellable runs the statements of sc as execute does, file naming it
// in diagnostics ("" for typed statements). Ctrl-C cancels it through interrupt. When a
// failure stops it before its last statement, it says how many it skipped,
// so a line of several statements never loses the later ones silently.
func (s *shell) runCancellable(ctx context.Context, file string, sc grammar.Script) error {
	var out statementOutcome
	err := s.cancellable(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.run.runScript(ctx, file, sc, false)
		return err
	})
	if err != nil {
		return err
	}
	if out.skipped > 0 {
		if _, err := fmt.Fprintf(s.stderr, "skipped %s after the error\n", plural(out.skipped, "statement")); err != nil {
			return ioError(err)
		}
	}
	return nil
}

// cancellable runs f with a context Ctrl-C cancels through interrupt.
func (s *shell) cancellable(ctx context.Context, f func(ctx context.Context) error) error {
	runCtx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel()
	}()
	return f(runCtx)
}

// plural is "1 statement", "2 statements".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printEvents prints each clock event above the prompt until ctx ends or
// the session closes. It takes the runner's output lock, so an event waits
// for the reply of the statement that is running (the ATTACH that started
// it, above all) to be printed first.
func (s *shell) printEvents(ctx context.Context) {
	for {
		ev, err := s.sess.NextEvent(ctx)
		if err != nil {
			return
		}
		s.run.outMu.Lock()
		_ = s.editor.PrintAbove(shellEventLine(ev))
		s.run.outMu.Unlock()
	}
}

// historyEntry is the history line of a statement: its lines joined by a
// space, since the history file holds one entry per line. Line comments
// outside strings, quoted names and block comments are dropped first, so
// joining cannot swallow the text after them.
func historyEntry(text string) string {
	var b strings.Builder
	var quote byte // ' or ` while inside a string or quoted name
	block := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n' || c == '\r':
			b.WriteByte(' ')
			continue
		case block:
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				block = false
				b.WriteString("*/")
				i++
				continue
			}
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`':
			quote = c
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			block = true
			b.WriteString("/*")
			i++
			continue
		case (c == '-' || c == '/') && i+1 < len(text) && text[i+1] == c:
			for i < len(text) && text[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
