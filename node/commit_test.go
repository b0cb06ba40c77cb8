package node

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/lifecycle"
)

// TestRetryableWriteErrors classifies what a statement's write retries
// under its request id and what ends it at once.
func TestRetryableWriteErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		retry bool
	}{
		{"no leader known", &catalog.NotLeaderError{}, true},
		{"leadership unconfirmed", catalog.ErrLeadershipUnconfirmed, true},
		{"leadership lost", catalog.ErrLeadershipLost, true},
		{"forwarding transport failure", fmt.Errorf("%w: forwarding to 127.0.0.1:1: %w", catalog.ErrOutcomeUnknown, errors.New("unexpected EOF")), true},
		{"not accepted in time", catalog.ErrTimeout, true},
		{"halted", catalog.ErrHalted, false},
		{"halted with an unknown outcome", fmt.Errorf("%w: %w", catalog.ErrOutcomeUnknown, catalog.ErrHalted), false},
		{"local shutdown", catalog.ErrShutdown, false},
		{"invalid command", lifecycle.ErrInvalidCommand, false},
		{"something else", errors.New("disk on fire"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.retry, retryable(tc.err))
		})
	}
}

// TestWriteDeadlineError checks that a write given up at its deadline
// matches the context's cause and says whether it may have committed.
func TestWriteDeadlineError(t *testing.T) {
	unknown := &WriteDeadlineError{Attempts: 3, Unknown: true, Cause: context.DeadlineExceeded, Last: catalog.ErrLeadershipLost}
	require.ErrorIs(t, unknown, context.DeadlineExceeded)
	require.ErrorIs(t, unknown, catalog.ErrOutcomeUnknown)
	require.NotErrorIs(t, unknown, catalog.ErrTimeout)
	require.Contains(t, unknown.Error(), "may have committed, so check the catalog")

	never := &WriteDeadlineError{Attempts: 2, Cause: context.Canceled, Last: &catalog.NotLeaderError{}}
	require.ErrorIs(t, never, context.Canceled)
	require.ErrorIs(t, never, catalog.ErrTimeout)
	require.NotErrorIs(t, never, catalog.ErrOutcomeUnknown)
	require.NotErrorIs(t, never, catalog.ErrNotLeader, "the last attempt's error is reported, not matched")
	require.Contains(t, never.Error(), "it was cancelled")
	require.Contains(t, never.Error(), "check SHOW CLUSTER STATUS")
}
