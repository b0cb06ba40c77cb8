package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/grammar"
)

// metaLine is a backslash (or sqlite3 dot) command on a line of its own in
// a script, where a statement could start.
type metaLine struct {
	cmd    metaCommand
	pos    grammar.Position // its first character
	source string           // the script's text, for its diagnostic
}

// splitScript cuts a script into its statements and the backslash and dot
// commands on lines of their own between them (grammar.CommandLines), as
// psql reads backslash commands from a file. A command line is blanked in
// the text the statements are cut from, so every statement keeps its
// position.
func splitScript(text string) (grammar.Script, []metaLine) {
	blanked, lines := grammar.CommandLines(text)
	if len(lines) == 0 {
		return grammar.Split(text), nil
	}
	metas := make([]metaLine, 0, len(lines))
	for _, cl := range lines {
		cmd, _ := parseMeta(cl.Text) // a line starting with \ or . always is one
		metas = append(metas, metaLine{cmd: cmd, pos: cl.Pos, source: text})
	}
	return grammar.Split(blanked), metas
}

// runSource runs a script's text, its backslash commands included.
func (r *runner) runSource(ctx context.Context, file, text string, keepGoing bool) (statementOutcome, error) {
	sc, metas := splitScript(text)
	return r.runScriptMeta(ctx, file, sc, metas, keepGoing)
}

// metaResult is how a backslash command ended.
type metaResult struct {
	msg         string // why it was refused; "" when it ran
	failed      bool   // a statement it ran failed (and said so)
	leave       bool   // \q: leave the shell, end the script
	interrupted bool   // Ctrl-C stopped it
}

// maxIncludeDepth bounds \i inside \i, so a file that includes itself
// fails instead of recursing until memory runs out.
const maxIncludeDepth = 16

// meta runs one of the backslash commands the shell and scripts share.
// file names the script it is in ("" in the shell); inScript says whether
// it is, for \watch. Only an output failure is returned as an error.
func (r *runner) meta(ctx context.Context, file string, cmd metaCommand, inScript bool) (metaResult, error) {
	switch cmd.name {
	case "exit", ".quit", ".exit", ".q":
		return metaResult{leave: true}, nil
	case "help":
		_, err := io.WriteString(r.out(), helpText)
		return metaResult{}, ioErrorOrNil(err)
	case `\timing`:
		on, err := onOff(`\timing`, cmd.arg, r.timing)
		if err != nil {
			return metaResult{msg: err.Error()}, nil
		}
		r.timing = on
		return metaResult{}, r.say("timing is " + map[bool]string{true: "on", false: "off"}[on])
	case `\x`:
		switch a := strings.ToLower(cmd.arg); a {
		case "":
			if r.expanded == expandedOff {
				r.expanded = expandedOn
			} else {
				r.expanded = expandedOff
			}
		case "on":
			r.expanded = expandedOn
		case "off":
			r.expanded = expandedOff
		case "auto":
			r.expanded = expandedAuto
		default:
			return metaResult{msg: fmt.Sprintf(`\x takes on, off or auto, not %q`, cmd.arg)}, nil
		}
		return metaResult{}, r.say("expanded display is " + r.expanded.String())
	case `\set`:
		if cmd.arg == "" {
			_, err := io.WriteString(r.out(), listVariables(r.vars))
			return metaResult{}, ioErrorOrNil(err)
		}
		name, value, _ := strings.Cut(cmd.arg, " ")
		if !validVariableName(name) {
			return metaResult{msg: fmt.Sprintf(`\set %s: a variable name is a letter or '_', then letters, digits and '_'`, name)}, nil
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = strings.ReplaceAll(value[1:len(value)-1], "''", "'")
		}
		if r.vars == nil {
			r.vars = map[string]string{}
		}
		r.vars[name] = value
		return metaResult{}, nil
	case `\unset`:
		if !validVariableName(cmd.arg) {
			return metaResult{msg: `\unset needs a variable name: \unset NAME`}, nil
		}
		delete(r.vars, cmd.arg)
		return metaResult{}, nil
	case `\o`:
		if err := r.redirect(cmd.arg); err != nil {
			return metaResult{msg: err.Error()}, nil
		}
		return metaResult{}, nil
	case `\watch`:
		return r.watch(ctx, cmd.arg, inScript)
	case `\sleep`:
		return r.sleep(ctx, cmd.arg)
	case `\wait`:
		return r.waitTick(ctx, cmd.arg)
	case `\d`, `\dt`, `\l`, `\D`, `\DT`, `\L`, ".tables":
		// psql's describe and list commands, as the statements they are
		// here: \d NAME describes a domain; \d, \dt and \l list the
		// domains, those matching a psql pattern (* and ?) when one is given.
		name := strings.ToLower(cmd.name)
		if name == ".tables" {
			name = `\dt`
		}
		text, err := listOrDescribe(name, cmd.arg)
		if err != nil {
			return metaResult{msg: err.Error()}, nil
		}
		return r.runMetaStatements(ctx, "", text)
	case `\i`:
		if cmd.arg == "" {
			return metaResult{msg: `\i needs a file: \i FILE`}, nil
		}
		if r.depth >= maxIncludeDepth {
			return metaResult{msg: fmt.Sprintf(`\i %s: files are nested more than %d deep; does one include itself?`, cmd.arg, maxIncludeDepth)}, nil
		}
		b, err := readFileLimited(cmd.arg, maxScriptBytes)
		if err != nil {
			return metaResult{msg: fmt.Sprintf(`\i: %v`, err)}, nil
		}
		r.depth++
		defer func() { r.depth-- }()
		out, err := r.runSource(ctx, cmd.arg, string(b), false)
		if err != nil {
			return metaResult{}, err
		}
		if out.skipped > 0 {
			if _, err := fmt.Fprintf(r.stderr, "skipped %s after the error\n", plural(out.skipped, "statement")); err != nil {
				return metaResult{}, ioError(err)
			}
		}
		return metaResult{failed: out.failed > 0, leave: out.quit, interrupted: out.interrupted}, nil
	}
	if strings.HasPrefix(cmd.name, ".") {
		return metaResult{msg: fmt.Sprintf("unknown command %s; this is not sqlite3: .tables is LIST DOMAINS; and .quit is \\q here, the shell knows %s, and statements end with ';'", cmd.name, knownMeta)}, nil
	}
	return metaResult{msg: fmt.Sprintf("unknown command %s; the shell knows %s, and statements end with ';'", cmd.name, knownMeta)}, nil
}

// runMetaStatements runs the statements a backslash command stands for.
func (r *runner) runMetaStatements(ctx context.Context, file, text string) (metaResult, error) {
	out, err := r.runText(ctx, file, text, false)
	if err != nil {
		return metaResult{}, err
	}
	return metaResult{failed: out.failed > 0, interrupted: out.interrupted}, nil
}

// say writes one of the shell's own messages (timing is on), which
// --quiet drops.
func (r *runner) say(line string) error {
	if r.quiet {
		return nil
	}
	return writeLine(r.stdout, line)
}

func ioErrorOrNil(err error) error {
	if err != nil {
		return ioError(err)
	}
	return nil
}

// onOff reads the on|off argument of a toggle; none flips cur.
func onOff(name, arg string, cur bool) (bool, error) {
	switch strings.ToLower(arg) {
	case "":
		return !cur, nil
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return cur, fmt.Errorf(`%s takes on or off, not %q`, name, arg)
}

// resultFile is the file \o or -o sends replies to.
type resultFile struct {
	name string
	f    *os.File
}

// resultFileMode is the mode a new \o or -o file is created with, the
// mode BACKUP writes archives with: replies may name domains and paths.
const resultFileMode = 0o600

// openResultFile creates (or truncates) the file replies go to.
func openResultFile(name string) (*resultFile, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, resultFileMode)
	if err != nil {
		return nil, err
	}
	return &resultFile{name: name, f: f}, nil
}

// redirect is \o: replies go to the file name from now on, or back to
// stdout when name is "". A file that cannot be opened leaves the output
// where it was.
func (r *runner) redirect(name string) error {
	var next *resultFile
	if name != "" {
		f, err := openResultFile(name)
		if err != nil {
			return fmt.Errorf(`\o: %v; the output stays where it was`, err)
		}
		next = f
	}
	if err := r.closeResults(); err != nil {
		if next != nil {
			next.f.Close()
		}
		return fmt.Errorf(`\o: %v`, err)
	}
	r.results = next
	return nil
}

// closeResults closes the \o file, if any; replies go to stdout again.
func (r *runner) closeResults() error {
	if r.results == nil {
		return nil
	}
	f := r.results
	r.results = nil
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return nil
}

// defaultWatchInterval is \watch's interval without SECONDS, psql's.
const defaultWatchInterval = 2 * time.Second

// watch is \watch [SECONDS [COUNT]]: the last statement again, every
// SECONDS (default 2), COUNT times or, in the shell, until Ctrl-C or a
// failure. A script must give COUNT: psql's \watch in a script runs until
// it is interrupted, which a job that runs scripts never does. The
// interval is armed on the runner's time source.
func (r *runner) watch(ctx context.Context, arg string, inScript bool) (metaResult, error) {
	const usage = `\watch [SECONDS [COUNT]]`
	interval := defaultWatchInterval
	count := 0 // no limit
	f := strings.Fields(arg)
	if len(f) > 2 {
		return metaResult{msg: "too many arguments; write " + usage}, nil
	}
	if len(f) > 0 {
		s, err := strconv.ParseFloat(f[0], 64)
		if err != nil || !(s > 0) || s > 86400 {
			return metaResult{msg: fmt.Sprintf(`\watch interval %q: give a number of seconds above 0 and at most 86400, such as 2 or 0.5; write %s`, f[0], usage)}, nil
		}
		interval = time.Duration(s * float64(time.Second))
	}
	if len(f) > 1 {
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 {
			return metaResult{msg: fmt.Sprintf(`\watch count %q: give a whole number of runs, at least 1; write %s`, f[1], usage)}, nil
		}
		count = n
	}
	if inScript && count == 0 {
		return metaResult{msg: `\watch in a script needs a count, so the script ends: \watch SECONDS COUNT (such as \watch 2 5)`}, nil
	}
	if r.last == "" {
		return metaResult{msg: `\watch runs the last statement again, and none has run yet; run one first`}, nil
	}
	last := r.last
	for run := 1; count == 0 || run <= count; run++ {
		if run > 1 {
			t := r.clock.NewTimer(interval)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				return metaResult{interrupted: inScript}, nil
			}
		}
		if !r.quiet {
			n := strconv.Itoa(run)
			if count > 0 {
				n += " of " + strconv.Itoa(count)
			}
			if _, err := fmt.Fprintf(r.out(), "watch every %s: run %s\n", interval, n); err != nil {
				return metaResult{}, ioError(err)
			}
		}
		res, err := r.runMetaStatements(ctx, "", last)
		if err != nil || res.failed || res.interrupted {
			if !inScript {
				res.interrupted = false // Ctrl-C ends \watch, not the shell
			}
			return res, err
		}
	}
	return metaResult{}, nil
}

// singleTransaction is -1: BEGIN before the first statement that is not
// a USE (a transaction is on the active domain, which the leading USE
// names), COMMIT after the last, REVERT after a failure.
type singleTransaction struct {
	begun bool
}

// errSingleTransaction marks the failures of -1's own BEGIN and COMMIT.
var errSingleTransaction = errors.New("single transaction")

// beginSingleTransaction sends -1's BEGIN before st when it is due. It
// reports whether st may run.
func (r *runner) beginSingleTransaction(ctx context.Context, file, text string, st grammar.StatementSource) (bool, error) {
	tx := r.singleTx
	if tx == nil || tx.begun {
		return true, nil
	}
	if first, _ := st.Keywords(); first == "USE" {
		return true, nil
	}
	results, err := r.exec.ExecText(ctx, "BEGIN;")
	if err != nil {
		d := statementDiagnostic(file, text, st.Start, err)
		d.Msg = fmt.Sprintf("-1 (--single-transaction) cannot BEGIN before this statement: %s; the script runs its transaction on the domain its leading USE names", d.Msg)
		d.Pos = st.Start
		return false, r.writeDiagnostic(d, fmt.Errorf("%w: %w", errSingleTransaction, err))
	}
	tx.begun = true
	for _, res := range results {
		if err := renderReply(r.out(), r.format, r.quiet, res); err != nil {
			return false, ioError(err)
		}
	}
	return true, nil
}

// endSingleTransaction ends -1's transaction: COMMIT when nothing failed,
// REVERT otherwise (unless ctx was cancelled: the session's end discards
// it then). It reports whether the COMMIT succeeded.
func (r *runner) endSingleTransaction(ctx context.Context, failed bool) (bool, error) {
	tx := r.singleTx
	if tx == nil || !tx.begun || ctx.Err() != nil {
		return true, nil
	}
	r.singleTx = nil // COMMIT and REVERT run outside it
	if failed {
		if s, ok := r.exec.(interface {
			InTransaction() (string, int, bool)
		}); ok {
			if _, _, open := s.InTransaction(); !open {
				return true, nil
			}
		}
		results, err := r.exec.ExecText(ctx, "REVERT;")
		if err != nil {
			_, werr := fmt.Fprintf(r.stderr, "error: -1 (--single-transaction): REVERT after the failure: %v\n", termSafe(err.Error()))
			return false, ioErrorOrNil(werr)
		}
		for _, res := range results {
			if err := renderReply(r.stderr, formatTable, false, res); err != nil {
				return false, ioError(err)
			}
		}
		return true, nil
	}
	out, err := r.runText(ctx, "-1", "COMMIT;", false)
	return out.failed == 0, err
}
