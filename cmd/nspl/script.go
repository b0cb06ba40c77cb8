package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

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
	// outMu is held while a statement runs and its reply is printed, so a
	// clock frame can never be printed before the reply of the ATTACH that
	// started it (frames are printed under the same lock).
	outMu *sync.Mutex
}

// statementOutcome says how one run of text ended.
type statementOutcome struct {
	failed      int  // statements that failed, an unsplittable rest included
	interrupted bool // ctx was cancelled while a statement ran
}

// runText runs every statement of text in order. file names the text in
// diagnostics ("" in the shell). It stops at the first failure unless
// keepGoing; a cancelled ctx always stops it. An error is returned only when
// output cannot be written.
func (r *runner) runText(ctx context.Context, file, text string, keepGoing bool) (statementOutcome, error) {
	var out statementOutcome
	stmts, splitErr := grammar.SplitStatements(text)
	for _, st := range stmts {
		if err := ctx.Err(); err != nil {
			out.interrupted = true
			return out, nil
		}
		ok, err := r.runStatement(ctx, file, text, st)
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
				return out, nil
			}
		}
	}
	if splitErr != nil {
		out.failed++ // the rest cannot be cut into statements: an unterminated string or comment
		if err := statementDiagnostic(file, text, grammar.Position{Line: 1, Column: 1}, splitErr).write(r.stderr); err != nil {
			return out, ioError(err)
		}
	}
	return out, nil
}

// runStatement plans and runs one statement cut from text, printing its
// reply or its diagnostic. It reports whether the statement succeeded.
func (r *runner) runStatement(ctx context.Context, file, text string, st grammar.StatementSource) (bool, error) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.echo {
		// JSON output stays one object per line: the echo goes beside it.
		echoTo := r.stdout
		if r.format == formatJSON {
			echoTo = r.stderr
		}
		if _, err := fmt.Fprintln(echoTo, st.Text); err != nil {
			return false, ioError(err)
		}
	}
	results, err := r.exec.ExecText(ctx, st.Text)
	if err != nil {
		if ctx.Err() != nil && !errors.As(err, new(*grammar.Error)) {
			err = fmt.Errorf("statement cancelled: %w", err)
		}
		d := statementDiagnostic(file, text, st.Start, err)
		if r.format == formatJSON {
			if werr := writeJSONError(r.stdout, d, err); werr != nil {
				return false, ioError(werr)
			}
		}
		if werr := d.write(r.stderr); werr != nil {
			return false, ioError(werr)
		}
		return false, nil
	}
	for _, res := range results {
		if err := renderReply(r.stdout, r.format, r.quiet, res); err != nil {
			return false, ioError(err)
		}
	}
	return true, nil
}
