package timesource

import (
	"context"
	"time"
)

// Sleep waits d of src's monotonic time and reports true, or reports false
// as soon as ctx ends or stop (which may be nil) is closed. It arms one
// timer and stops it before it returns, so a cancelled wait leaves nothing
// armed.
func Sleep(ctx context.Context, src Source, d time.Duration, stop <-chan struct{}) bool {
	t := src.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	}
}
