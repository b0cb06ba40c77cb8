package wire_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/wire"
)

// TestCodeTable: a local failure is sent under the code of the sentinel in
// its chain, and a remote failure under that code matches the sentinel it
// was sent for and no other, whichever package declares it: the code
// travels with the sentinel, so neither side consults a registry.
func TestCodeTable(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error // a local failure
		sentinel error // the sentinel it is sent for
		code     string
	}{
		{"catalog", fmt.Errorf("commit: %w", catalog.ErrTimeout), catalog.ErrTimeout, "catalog_timeout"},
		{"not leader", &catalog.NotLeaderError{Leader: "n2"}, catalog.ErrNotLeader, "not_leader"},
		{"clockrt", clockrt.ErrDomainMissing, clockrt.ErrDomainMissing, "domain_missing"},
		{"grammar", grammar.ErrSyntax, grammar.ErrSyntax, "syntax"},
		{"lifecycle", &record.Error{Code: record.CodeAlreadyRunning, Message: "m"}, record.ErrAlreadyRunning, "already_running"},
		{"protocol", fmt.Errorf("%w: bad line", wire.ErrProtocol), wire.ErrProtocol, "protocol"},
		{"relayed", fmt.Errorf("forwarded: %w", &wire.RemoteError{Code: "outcome_unknown"}), catalog.ErrOutcomeUnknown, "outcome_unknown"},
		{"uncoded", errors.New("boom"), nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.code, wire.CodeOf(tt.err))
			re := &wire.RemoteError{Code: tt.code, Message: tt.err.Error()}
			require.ErrorIs(t, re, wire.ErrRemote, "every remote failure is the peer's")
			require.Equal(t, tt.err.Error(), re.Error())
			require.Equal(t, tt.code, wire.CodeOf(re), "a remote failure relayed on keeps its code")
			for _, other := range []error{catalog.ErrTimeout, catalog.ErrNotLeader, catalog.ErrOutcomeUnknown, clockrt.ErrDomainMissing,
				grammar.ErrSyntax, record.ErrAlreadyRunning, wire.ErrProtocol, wire.ErrClosed} {
				require.Equal(t, other == tt.sentinel, errors.Is(re, other), "errors.Is(%q, %q)", tt.code, other)
			}
		})
	}
}

// TestCodeAliases: older nodes spelled catalog's timeout and shutdown codes
// without the catalog_ prefix; the old spelling still decodes and is never
// sent.
func TestCodeAliases(t *testing.T) {
	for alias, sentinel := range map[string]error{"timeout": catalog.ErrTimeout, "shutdown": catalog.ErrShutdown} {
		require.ErrorIs(t, &wire.RemoteError{Code: alias}, sentinel)
		require.NotEqual(t, alias, wire.CodeOf(sentinel))
		require.Contains(t, wire.AliasesOf(sentinel), alias)
	}
}

// TestRemoteErrorMatchesNoUncodedError: a code names only the coded
// sentinel that carries it; an uncoded error of the same message, or a
// failure with no code at all, is no match.
func TestRemoteErrorMatchesNoUncodedError(t *testing.T) {
	plain := errors.New(wire.ErrProtocol.Error())
	require.NotErrorIs(t, &wire.RemoteError{Code: "protocol", Message: plain.Error()}, plain)
	require.NotErrorIs(t, &wire.RemoteError{}, wire.NewSentinel("x", "x"))
	require.ErrorIs(t, &wire.ClockFailure{Code: "protocol"}, wire.ErrProtocol)
	require.NotErrorIs(t, &wire.ClockFailure{Code: "protocol"}, wire.ErrClosed)
}

func TestNewSentinelNeedsACode(t *testing.T) {
	require.Panics(t, func() { wire.NewSentinel("", "m") })
	require.Panics(t, func() { wire.NewSentinel("c", "m", "") })
	s := wire.NewSentinel("c", "message", "old_c")
	require.EqualError(t, s, "message")
	require.Equal(t, "c", wire.CodeOf(s))
	require.Equal(t, []string{"old_c"}, wire.AliasesOf(s))
}
