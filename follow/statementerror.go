package follow

import (
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/wire"
)

// StatementError is a statement's positioned failure, the one type every
// entry point returns for a statement that failed: the server-side session
// and the embedded API for a refusal or an execution failure, the remote
// client for a failure the server reported or one of its own (an archive
// it could not read, a lost connection), and both for statement text that
// does not parse. Pos is the statement's place in the caller's text (the
// offending token's, for text that does not parse); Kind is the typed
// cause, which errors.Is and errors.As reach through Unwrap: a sentinel,
// a typed refusal such as a *record.Error, a *wire.RemoteError that
// matches the sentinel its code names, or the *grammar.Error of text that
// does not parse. Package nspl names it Error.
//
// It lives here, not in grammar, because it wraps failures grammar knows
// nothing of, and not in session, because the remote client builds the
// same value from a server's wire error (DecodeError) without linking a
// server-side session. Grammar keeps its own *grammar.Error for the
// text's syntax and literal errors, which a StatementError wraps whole.
type StatementError struct {
	Pos  grammar.Position
	Msg  string
	Kind error
}

// Error returns "LINE:COL: message".
func (e *StatementError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Column, e.Msg)
}

// Unwrap returns the typed cause.
func (e *StatementError) Unwrap() error { return e.Kind }

// Positioned returns err as the failure of the statement at pos. A
// *StatementError is returned as it is; the *grammar.Error of text that
// does not parse becomes a *StatementError at its own position, which is
// more precise than the statement's; wire.ErrClosed is returned bare,
// since being closed is no statement's fault and a position would only
// mislead; nil is nil.
func Positioned(pos grammar.Position, err error) error {
	if err == nil || errors.Is(err, wire.ErrClosed) {
		return err
	}
	var se *StatementError
	if errors.As(err, &se) {
		return err
	}
	if pe := textError(err); pe != nil {
		return pe
	}
	return &StatementError{Pos: pos, Msg: err.Error(), Kind: err}
}

// ScriptFailure returns the error a run of statement text ended with
// (planner.RunScript) as a statement's failure: the *grammar.Error of text
// that does not parse becomes a *StatementError at its position; every
// other error, a statement's failure already or ErrClosed, is returned as
// it is.
func ScriptFailure(err error) error {
	var se *StatementError
	if err == nil || errors.As(err, &se) {
		return err
	}
	if pe := textError(err); pe != nil {
		return pe
	}
	return err
}

// textError returns the *StatementError of a *grammar.Error err holds, or
// nil.
func textError(err error) *StatementError {
	var ge *grammar.Error
	if !errors.As(err, &ge) {
		return nil
	}
	return &StatementError{Pos: ge.Pos, Msg: ge.Msg, Kind: err}
}

// AsStatementError returns the statement failure err holds: its
// *StatementError, or one at the position of a bare *grammar.Error (text
// parsed without a session), or nil when err holds neither.
func AsStatementError(err error) *StatementError {
	var se *StatementError
	if errors.As(err, &se) {
		return se
	}
	return textError(err)
}
