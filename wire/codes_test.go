package wire_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/runtime"
	_ "github.com/nspl-dev/nspl/session" // registers grammar's and planner's codes
	"github.com/nspl-dev/nspl/wire"
)

func TestCodeTable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error // a local failure
		code string
	}{
		{"catalog", fmt.Errorf("commit: %w", catalog.ErrTimeout), "catalog_timeout"},
		{"not leader", &catalog.NotLeaderError{Leader: "n2"}, "not_leader"},
		{"runtime", runtime.ErrDomainMissing, "domain_missing"},
		{"grammar", grammar.ErrSyntax, "syntax"},
		{"protocol", fmt.Errorf("%w: bad line", wire.ErrProtocol), "protocol"},
		{"unregistered", errors.New("boom"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.code, wire.CodeOf(tt.err))
			re := &wire.RemoteError{Code: tt.code, Message: tt.err.Error()}
			if tt.code == "" {
				require.ErrorIs(t, re, wire.ErrRemote)
				return
			}
			require.Equal(t, tt.err.Error(), re.Error())
			require.Equal(t, tt.code, wire.CodeOf(errors.Unwrap(re)), "the code unwraps to the sentinel it was sent for")
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
	}
}

func TestRegisterCodeConflict(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	wire.RegisterCode("test_conflict", a)
	wire.RegisterCode("test_conflict", a) // the same pair again is harmless
	require.Panics(t, func() { wire.RegisterCode("test_conflict", b) })
	require.Panics(t, func() { wire.RegisterCode("", a) })
}
