package follow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

func TestErrorRoundTrip(t *testing.T) {
	pos := grammar.Position{Offset: 12, Line: 2, Column: 3}
	le := &lifecycle.Error{Code: lifecycle.CodeDomainNotFound, Domain: "x", Message: "domain 'x' does not exist"}
	tests := []struct {
		name string
		err  error
		is   error
		code string
	}{
		{"session sentinel", &grammar.Error{Pos: pos, Msg: "no active domain", Kind: session.ErrNoActiveDomain}, session.ErrNoActiveDomain, "no_active_domain"},
		{"wrapped sentinel", &grammar.Error{Pos: pos, Msg: "m", Kind: &session.TransactionError{Err: session.ErrInTransaction, Statement: "USE"}}, session.ErrInTransaction, "in_transaction"},
		{"transaction full", &grammar.Error{Pos: pos, Msg: "m", Kind: &session.TransactionLimitError{Domain: "p", Steps: 1, MaxSteps: 1}}, session.ErrTransactionFull, "transaction_full"},
		{"transaction expired", &grammar.Error{Pos: pos, Msg: "m", Kind: &session.TransactionExpiredError{Domain: "p"}}, session.ErrTransactionExpired, "transaction_expired"},
		{"grammar kind", &grammar.Error{Pos: pos, Msg: "expected x", Kind: grammar.ErrSyntax}, grammar.ErrSyntax, "syntax"},
		{"lifecycle", &grammar.Error{Pos: pos, Msg: le.Message, Kind: le}, lifecycle.ErrDomainNotFound, "domain_not_found"},
		{"statement error", &follow.StatementError{Pos: pos, Msg: "m", Kind: session.ErrNotInTransaction}, session.ErrNotInTransaction, "not_in_transaction"},
		{"statement error around a syntax error", &follow.StatementError{Pos: pos, Msg: "expected x", Kind: &grammar.Error{Pos: pos, Msg: "expected x", Kind: grammar.ErrSyntax}}, grammar.ErrSyntax, "syntax"},
		{"attachment", &follow.StatementError{Pos: pos, Msg: "m", Kind: &session.AttachmentError{Err: session.ErrNotAttached, Domain: "p"}}, follow.ErrNotAttached, "not_attached"},
		{"cancelled", &grammar.Error{Pos: pos, Msg: "context canceled", Kind: context.Canceled}, wire.ErrCanceled, "canceled"},
		{"unknown cause", &grammar.Error{Pos: pos, Msg: "boom", Kind: errors.New("boom")}, nil, "error"},
		{"unpositioned", errors.New("plain"), nil, "error"},
		{"closed", session.ErrClosed, wire.ErrClosed, "session_closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := follow.EncodeError(tt.err)
			require.Equal(t, tt.code, w.Code)
			got := follow.DecodeError(w)
			if want := follow.AsStatementError(tt.err); want != nil {
				require.Equal(t, want.Pos, got.Pos)
				require.Equal(t, want.Msg, got.Msg)
			} else {
				require.Equal(t, grammar.Position{Line: 1, Column: 1}, got.Pos)
			}
			if tt.is != nil {
				require.ErrorIs(t, got, tt.is)
			}
			if tt.name == "lifecycle" {
				require.Equal(t, le, lifecycle.AsError(got))
			}
		})
	}
}

// TestDecodeErrorRefusesBadLifecycle: a lifecycle payload that does not
// decode is a protocol failure, never a zero *lifecycle.Error.
func TestDecodeErrorRefusesBadLifecycle(t *testing.T) {
	for _, raw := range []string{`5`, `"x"`, `{"code":1}`} {
		got := follow.DecodeError(&wire.Error{Line: 1, Column: 1, Code: "lifecycle", Message: "m", Lifecycle: []byte(raw)})
		require.ErrorIs(t, got, wire.ErrProtocol, raw)
		require.Nil(t, lifecycle.AsError(got), raw)
	}
}

// TestDecodeErrorReadsTheOldLifecycleForm: servers before lifecycle
// refusals had codes of their own sent every one under the code
// "lifecycle", the refusal's code inside its payload; that form still
// decodes to the same refusal, matching its sentinel and no other.
func TestDecodeErrorReadsTheOldLifecycleForm(t *testing.T) {
	le := &lifecycle.Error{Code: lifecycle.CodeAlreadyRunning, Domain: "p", Message: "domain 'p' is already running"}
	w := follow.EncodeError(&follow.StatementError{Pos: grammar.Position{Line: 1, Column: 1}, Msg: le.Message, Kind: le})
	require.Equal(t, "already_running", w.Code, "a lifecycle refusal travels under its own code")
	w.Code = "lifecycle"
	got := follow.DecodeError(w)
	require.ErrorIs(t, got, lifecycle.ErrAlreadyRunning)
	require.NotErrorIs(t, got, lifecycle.ErrDomainRunning)
	require.Equal(t, le, lifecycle.AsError(got))
	require.Equal(t, "already_running", follow.EncodeError(got).Code, "re-encoded in the current form")
}
