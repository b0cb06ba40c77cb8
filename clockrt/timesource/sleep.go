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

// WithTimeout returns a copy of ctx that is cancelled, with cause
// context.DeadlineExceeded, once d of src's monotonic time has passed, and
// the function that releases it (cancelling with context.Canceled). The
// returned context has no Deadline: the bound lives on src, so a fake
// source decides when it expires. A goroutine waits for the timer until
// the release function runs, which waits for it to end.
func WithTimeout(ctx context.Context, src Source, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := src.NewTimer(max(d, 0))
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-t.C():
			cancel(context.DeadlineExceeded)
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
		<-done
	}
}
