package server

import (
	"context"
	"errors"
)

// isContextError reports a cancellation or deadline.
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
