package catalog

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func isDrained(p *inflight) bool {
	select {
	case <-p.drained():
		return true
	default:
		return false
	}
}

func TestInflightDrainsOnlyAfterEveryAdmittedCallerExits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		admitted int
	}{
		{"none in flight", 0},
		{"one in flight", 1},
		{"several in flight", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newInflight()
			for range tc.admitted {
				require.True(t, p.enter())
			}
			require.False(t, p.closed())
			require.False(t, isDrained(p), "drained before close")
			p.close()
			p.close() // idempotent
			require.True(t, p.closed())
			require.False(t, p.enter(), "admitted after close")
			for i := range tc.admitted {
				require.False(t, isDrained(p), "drained with %d callers still in flight", tc.admitted-i)
				p.exit()
			}
			require.True(t, isDrained(p))
		})
	}
}

// A close racing admitted callers still drains once they exit, and admits
// nobody afterwards.
func TestInflightRacingCallersAndClose(t *testing.T) {
	p := newInflight()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if !p.enter() {
					return
				}
				p.exit()
			}
		})
	}
	p.close()
	<-p.drained()
	require.False(t, p.enter())
	wg.Wait()
	require.True(t, isDrained(p))
}
