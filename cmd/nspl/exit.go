package main

import (
	"errors"
	"fmt"
)

// Exit codes. They are part of the command's contract: CI jobs branch on
// them, and --help lists them.
const (
	// ExitOK means every statement succeeded (or the clock wait was met).
	ExitOK = 0
	// ExitFailed means a statement failed, or nspl clock timed out or was
	// interrupted before its condition was met.
	ExitFailed = 1
	// ExitUsage means the command line was wrong: an unknown flag, a bad
	// flag value, an unexpected argument.
	ExitUsage = 2
	// ExitIO means a file could not be read or output could not be
	// written, or the node could not be opened.
	ExitIO = 3
	// ExitNoTick means nspl clock --until-tick found a clock that cannot
	// tick: a stopped domain (without --wait-start) or an unpaced one.
	ExitNoTick = 4
)

// Exit codes of nspl fmt, which has its own (nspl fmt --help lists them):
// 0 and 2 as above, and these.
const (
	// ExitFmtUnformatted means nspl fmt --check found a file to change.
	ExitFmtUnformatted = 1
	// ExitFmtSyntax means nspl fmt found a file that does not parse.
	ExitFmtSyntax = 3
	// ExitFmtIO means nspl fmt could not read or write a file.
	ExitFmtIO = 4
)

// Sentinel errors that classify a failed Run. Every error Run returns wraps
// exactly one of them, and ExitCode maps them to the process exit code.
var (
	// ErrUsage reports a command line that cannot be run; fix the flags.
	ErrUsage = errors.New("usage error")
	// ErrStatementFailed reports that at least one statement failed; the
	// failures were printed with their positions.
	ErrStatementFailed = errors.New("statement failed")
	// ErrIO reports a file, terminal or storage failure.
	ErrIO = errors.New("i/o error")
	// ErrClockTimeout reports that nspl clock gave up waiting.
	ErrClockTimeout = errors.New("clock wait timed out")
	// ErrNoTick reports that nspl clock --until-tick was given a clock
	// that cannot tick, so no wait would end.
	ErrNoTick = errors.New("the clock cannot tick")
	// ErrInterrupted reports that Ctrl-C stopped a script or a clock wait.
	ErrInterrupted = errors.New("interrupted")
	// ErrUnformatted reports that nspl fmt --check found a file that
	// formatting would change.
	ErrUnformatted = errors.New("not formatted")
	// ErrSyntax reports that nspl fmt found text that does not parse; the
	// errors were printed with their positions.
	ErrSyntax = errors.New("syntax error")
)

// RunError is an error Run returns. Reported is true when the details were
// already written to stderr (statement diagnostics), so main prints nothing
// more.
type RunError struct {
	Kind     error
	Err      error
	Reported bool
	// Code, when not zero, is the exit code instead of Kind's (nspl fmt's
	// own codes).
	Code int
	// Help names the subcommand whose --help a usage error points to
	// ("" is nspl's own).
	Help string
}

// helpHint is the line after a usage error: the help of the subcommand
// it came from.
func helpHint(err error) string {
	var re *RunError
	if errors.As(err, &re) && re.Help != "" {
		return "Run 'nspl " + re.Help + " --help' for usage."
	}
	return "Run 'nspl --help' for usage."
}

// Error returns the underlying message.
func (e *RunError) Error() string {
	if e.Err == nil {
		return e.Kind.Error()
	}
	return e.Err.Error()
}

// Unwrap returns both the kind and the underlying error, so errors.Is finds
// either.
func (e *RunError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func usageErrorf(format string, args ...any) error {
	return &RunError{Kind: ErrUsage, Err: fmt.Errorf(format, args...)}
}

func ioError(err error) error {
	return &RunError{Kind: ErrIO, Err: err}
}

// ExitCode maps an error returned by Run to the process exit code.
func ExitCode(err error) int {
	var re *RunError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &re) && re.Code != 0:
		return re.Code
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, ErrIO):
		return ExitIO
	case errors.Is(err, ErrNoTick):
		return ExitNoTick
	default:
		return ExitFailed
	}
}

// reported reports whether err's details have already been printed.
func reported(err error) bool {
	var re *RunError
	return errors.As(err, &re) && re.Reported
}
