package timesource

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSleep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		end  func(f *Fake, cancel context.CancelFunc, stop chan struct{})
		want bool
	}{
		{"the time passes", func(f *Fake, _ context.CancelFunc, _ chan struct{}) { f.Advance(time.Second) }, true},
		{"the context ends", func(_ *Fake, cancel context.CancelFunc, _ chan struct{}) { cancel() }, false},
		{"stop closes", func(_ *Fake, _ context.CancelFunc, stop chan struct{}) { close(stop) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(0)
			sctx, scancel := context.WithCancel(ctx)
			defer scancel()
			stop := make(chan struct{})
			got := make(chan bool, 1)
			go func() { got <- Sleep(sctx, f, time.Second, stop) }()
			require.NoError(t, f.BlockUntil(ctx, 1))
			f.Advance(time.Second - 1)
			select {
			case v := <-got:
				t.Fatalf("Sleep returned %v before its time", v)
			default:
			}
			tc.end(f, scancel, stop)
			require.Equal(t, tc.want, <-got)
			require.Zero(t, f.Armed(), "the timer is stopped")
		})
	}
	require.False(t, Sleep(ctx, NewFake(0), time.Second, closedChan()), "a closed stop returns at once")
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }

func TestWithTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		advance time.Duration
		release bool // release before the time passes
		cause   error
	}{
		{"just inside the bound", time.Second - 1, true, context.Canceled},
		{"at the bound", time.Second, false, context.DeadlineExceeded},
		{"past the bound", time.Second + 1, false, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(0)
			tctx, release := WithTimeout(context.Background(), f, time.Second)
			require.Equal(t, 1, f.Armed())
			f.Advance(tc.advance)
			if tc.release {
				require.NoError(t, tctx.Err(), "not expired before its time")
				release()
			} else {
				<-tctx.Done()
				release()
			}
			require.ErrorIs(t, context.Cause(tctx), tc.cause)
			require.Zero(t, f.Armed(), "the timer is stopped")
			_, has := tctx.Deadline()
			require.False(t, has, "the bound lives on the source, not the wall clock")
		})
	}
}
