package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// statementExecutor runs statement text; an embedded *nspl.Session and a
// remote *client.Client are both one.
type statementExecutor interface {
	ExecText(ctx context.Context, text string) ([]wire.Result, error)
}

// runner runs statement text against a session and prints replies and
// diagnostics. The shell and the script runner share it.
type runner struct {
	exec   statementExecutor
	stdout io.Writer
	stderr io.Writer
	format outputFormat
	echo   bool // print each statement first: on stdout, on stderr with JSON
	quiet  bool // --quiet: result sets only, no messages
	// timing (the shell's \timing) prints each statement's elapsed time,
	// measured on clock, after its reply.
	timing bool
	clock  timesource.Source
	// virtual is the embedded session under --virtual-time, nil otherwise:
	// the runner prints the clock events it settles into (printSettled).
	virtual virtualSession
	// outMu is held while a statement runs and its reply is printed, so a
	// clock frame can never be printed before the reply of the ATTACH that
	// started it (frames are printed under the same lock).
	outMu *sync.Mutex

	// The state psql's backslash commands set, in the shell and in scripts.
	vars     map[string]string // \set and -v, substituted for :NAME and :'NAME'
	expanded expandedMode      // \x
	results  *resultFile       // \o FILE and -o FILE; nil: stdout
	last     string            // the last statement run, which \watch runs again
	depth    int               // \i files being run inside one another
	// singleTx is -1's transaction around the whole input; nil without -1.
	singleTx *singleTransaction
}

// out is where replies go: the \o file, or stdout.
func (r *runner) out() io.Writer {
	if r.results != nil {
		return r.results.f
	}
	return r.stdout
}

// statementOutcome says how one run of text ended.
type statementOutcome struct {
	failed      int  // statements that failed, an unsplittable rest included
	skipped     int  // statements not run after the failure that stopped the text
	interrupted bool // ctx was cancelled while a statement ran
	quit        bool // a \q stopped the text
}

// runText runs every statement of text in order. file names the text in
// diagnostics ("" in the shell). It stops at the first failure unless
// keepGoing; a cancelled ctx always stops it. An error is returned only when
// output cannot be written.
func (r *runner) runText(ctx context.Context, file, text string, keepGoing bool) (statementOutcome, error) {
	return r.runScript(ctx, file, grammar.Split(text), keepGoing)
}

// runScript is runText on a text already split: the shell splits what was
// typed once, for its history and for the runner, and nothing splits it
// again.
func (r *runner) runScript(ctx context.Context, file string, sc grammar.Script, keepGoing bool) (statementOutcome, error) {
	return r.runScriptMeta(ctx, file, sc, nil, keepGoing)
}

// runScriptMeta is runScript on a script with backslash command lines
// (splitScript): each runs between the statements before and after it.
func (r *runner) runScriptMeta(ctx context.Context, file string, sc grammar.Script, metas []metaLine, keepGoing bool) (statementOutcome, error) {
	var out statementOutcome
	text, stmts, splitErr := sc.Text, sc.Statements, sc.Err
	runMetas := func(before int) (stop bool, err error) {
		for len(metas) > 0 && metas[0].pos.Offset < before {
			ml := metas[0]
			metas = metas[1:]
			if ctx.Err() != nil {
				out.interrupted = true
				return true, nil
			}
			res, err := r.meta(ctx, file, ml.cmd, true)
			if err != nil {
				return true, err
			}
			if res.msg != "" {
				d := diagnostic{File: file, Source: ml.source, Pos: ml.pos, Msg: res.msg}
				if werr := d.write(r.stderr); werr != nil {
					return true, ioError(werr)
				}
				res.failed = true
			}
			out.interrupted = out.interrupted || res.interrupted
			switch {
			case res.interrupted:
				return true, nil
			case res.leave:
				out.quit = true
				return true, nil
			case res.failed:
				out.failed++
				if !keepGoing {
					return true, nil
				}
			}
		}
		return false, nil
	}
	for i, st := range stmts {
		if stop, err := runMetas(st.Start.Offset); stop || err != nil {
			if err == nil && out.failed > 0 && !keepGoing && !out.interrupted && !out.quit {
				out.skipped = len(stmts) - i
				if splitErr != nil {
					out.skipped++
				}
			}
			return out, err
		}
		if err := ctx.Err(); err != nil {
			out.interrupted = true
			return out, nil
		}
		ok, err := r.beginSingleTransaction(ctx, file, text, st)
		if err == nil && ok {
			ok, err = r.runStatement(ctx, file, text, st)
		}
		if err != nil {
			return out, err
		}
		if !ok {
			out.failed++
			if ctx.Err() != nil {
				out.interrupted = true
				return out, nil
			}
			if !keepGoing {
				out.skipped = len(stmts) - i - 1
				if splitErr != nil {
					out.skipped++ // the unterminated rest
				}
				return out, nil
			}
		}
	}
	if stop, err := runMetas(len(text) + 1); stop || err != nil {
		return out, err
	}
	if splitErr != nil {
		out.failed++ // the rest cannot be cut into statements: an unterminated string or comment
		d := statementDiagnostic(file, text, grammar.Position{Line: 1, Column: 1}, splitErr)
		if err := r.writeDiagnostic(d, splitErr); err != nil {
			return out, err
		}
	}
	return out, nil
}

// runStatement runs one statement cut from text, printing its reply or its
// diagnostic. It reports whether the statement succeeded. The runner parses
// nothing: the session parses the statement's text (a remote session sends
// it to the server, which parses it), and the runner tells a LIST DOMAINS,
// whose rows it prints as they stream, by its keywords.
func (r *runner) runStatement(ctx context.Context, file, text string, st grammar.StatementSource) (bool, error) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	r.last = st.Text
	stmtText, subs, err := substituteVariables(st.Text, r.vars)
	if err != nil {
		var uv *undefinedVariableError
		pos := st.Start
		if errors.As(err, &uv) {
			pos = shiftPosition(st.Start, positionIn(st.Text, uv.Offset))
		}
		return false, r.writeDiagnostic(diagnostic{File: file, Source: text, Pos: pos, Msg: err.Error()}, err)
	}
	stdout := r.out()
	if r.echo {
		// JSON output stays one object per line: the echo goes beside it.
		echoTo := stdout
		if r.format == formatJSON {
			echoTo = r.stderr
		}
		if _, err := fmt.Fprintln(echoTo, st.Text); err != nil {
			return false, ioError(err)
		}
	}
	var started time.Duration
	if r.timing {
		started = r.clock.Monotonic()
	}
	var results []wire.Result
	var rows *rowPrinter
	if rs, ok := r.exec.(rowStreamer); ok {
		if streamedList(st) {
			rows = &rowPrinter{w: stdout, format: r.format, quiet: r.quiet, source: stmtText, expanded: r.expanded}
			results, err = rs.ExecTextRows(ctx, stmtText, rows.chunk)
		}
	}
	if rows == nil {
		results, err = r.exec.ExecText(ctx, stmtText)
	}
	if r.timing {
		defer r.printElapsed(r.clock.Monotonic() - started)
	}
	if err != nil && rows != nil {
		if werr := rows.abort(); werr != nil {
			return false, ioError(werr)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = cancelledError(err, cancelCheck(st, r.exec))
		}
		d := statementDiagnostic(file, text, st.Start, err)
		if ge := follow.AsStatementError(err); ge != nil && subs != nil {
			// The position is in the text sent, after substitution:
			// point at the script's own text instead.
			d.Pos = shiftPosition(st.Start, positionIn(st.Text, originalOffset(subs, ge.Pos.Offset)))
			if errors.Is(err, grammar.ErrSyntax) {
				d.Hint = backtickHint(text, d.Pos.Offset)
			}
		}
		return false, r.writeDiagnostic(d, err)
	}
	for _, res := range results {
		if rows != nil {
			err = rows.finish(res)
		} else {
			err = renderReplyExpanded(stdout, r.format, r.quiet, r.expanded, res)
		}
		if err != nil {
			return false, ioError(err)
		}
	}
	return true, r.printSettled(ctx)
}

// writeDiagnostic prints d, the failure err of a statement: on stderr, and
// as a JSON object among the replies with --format json.
func (r *runner) writeDiagnostic(d diagnostic, err error) error {
	if r.format == formatJSON {
		if werr := writeJSONError(r.out(), d, err); werr != nil {
			return ioError(werr)
		}
	}
	if werr := d.write(r.stderr); werr != nil {
		return ioError(werr)
	}
	return nil
}

// printElapsed writes the \timing line of one statement. It runs after the
// reply or the diagnostic, on the same output as replies.
func (r *runner) printElapsed(d time.Duration) {
	_, _ = fmt.Fprintf(r.out(), "time: %s\n", d.Round(time.Microsecond))
}

// cancelledError is the failure of a statement whose context was cancelled
// (Ctrl-C) while it ran: whatever error the statement ended with, it says
// that it was cancelled, and that a change already sent may still be
// applied, since a proposal the cluster has taken is not withdrawn; check
// (cancelCheck) says how to find out, "" for a statement that changes
// nothing. A remote session abandons the statement at once (its node may
// not answer at all) and tells the node in the background: its error is
// ctx's own. A syntax error is left alone: it was found before anything ran.
func cancelledError(err error, check string) error {
	const cancelled = "statement cancelled"
	after := "a change it had already sent may still be applied; " + check + " before running it again"
	if check == "" {
		after = "it changes nothing, so it can simply run again"
	}
	const abandoned = "statement abandoned at Ctrl-C"
	ge := follow.AsStatementError(err)
	if ge != nil && (errors.Is(err, grammar.ErrSyntax) || strings.HasPrefix(ge.Msg, cancelled) || strings.HasPrefix(ge.Msg, abandoned)) {
		return err
	}
	var msg string
	if errors.Is(err, context.Canceled) {
		msg = fmt.Sprintf("%s (%s): nspl stopped waiting for the node, which is told to cancel it; %s", abandoned, context.Canceled, after)
	} else {
		cause := err.Error()
		if ge != nil {
			cause = ge.Msg
		}
		msg = fmt.Sprintf("%s: %s (%s)", cancelled, cause, after)
	}
	if ge == nil {
		return &cancelError{msg: msg, err: err}
	}
	return &follow.StatementError{Pos: ge.Pos, Kind: ge.Kind, Msg: msg}
}

// cancelError is cancelledError's failure of an error without a position.
type cancelError struct {
	msg string
	err error
}

func (e *cancelError) Error() string { return e.msg }
func (e *cancelError) Unwrap() error { return e.err }

// cancelCheck says how to find out whether st, cancelled, took effect
// anyway: the statement that shows what it would have changed, or "" for a
// statement that changes nothing. exec gives the session's active domain
// and open transaction, when it knows them.
func cancelCheck(st grammar.StatementSource, exec statementExecutor) string {
	active, inTx := "", false
	if s, ok := exec.(interface {
		ActiveDomain() string
		InTransaction() (string, int, bool)
	}); ok {
		active = s.ActiveDomain()
		_, _, inTx = s.InTransaction()
	}
	describe := "run DESCRIBE DOMAIN;"
	if active != "" {
		describe = "run DESCRIBE DOMAIN " + termSafe(grammar.FormatName(active)) + ";"
	}
	switch first, second := st.Keywords(); first {
	case "LIST", "SHOW", "ATTACH", "DETACH", "USE":
		return ""
	case "DESCRIBE":
		if second == "BACKUP" || second == "DOMAIN" {
			return ""
		}
	case "BEGIN", "REVERT", "ROLLBACK":
		return "run SHOW TRANSACTIONS; to see whether it did"
	case "START", "STOP", "ALTER":
		if inTx {
			return "run SHOW TRANSACTIONS; to see whether it was queued"
		}
		return describe + " to see whether it did"
	case "COMMIT":
		return describe + " and SHOW TRANSACTIONS; to see whether it did"
	case "CREATE", "DROP", "RESTORE":
		return "run LIST DOMAINS; to see whether it did"
	case "BACKUP":
		return "run DESCRIBE BACKUP on its path to see whether the archive was written"
	}
	return "check what it changes"
}
