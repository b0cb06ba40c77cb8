package clockrt

import (
	"errors"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	base   = int64(1_767_225_600_000_000_000) // 2026-01-01T00:00:00Z
	second = int64(1_000_000_000)
)

var fenceA = lifecycle.AuthorityFence{Node: "a", Incarnation: 1, Revision: 1}
var fenceB = lifecycle.AuthorityFence{Node: "b", Incarnation: 7, Revision: 2}

func paced(gen uint64, rate float64, rev uint64) Lifecycle {
	return Lifecycle{
		State: StatePaced, Generation: gen, StartPoint: base - 10*second,
		Mapping: clock.Mapping{WallStartedAt: base, LogicalStart: base - 10*second, Rate: rate},
		Period:  uint64(second), Skew: uint64(second / 10), Authority: fenceA, Revision: rev,
	}
}

func unpaced(gen uint64, rev uint64) Lifecycle {
	return Lifecycle{State: StateUnpaced, Generation: gen, StartPoint: base, Revision: rev}
}

func stopped(gen uint64, rev uint64) Lifecycle {
	return Lifecycle{State: StateStopped, Generation: gen, StartPoint: base, Revision: rev}
}

func uninstalled(gen uint64, rev uint64) Lifecycle {
	return Lifecycle{State: StateUninstalled, Generation: gen, StartPoint: base, Revision: rev}
}

func newFakeRegistry(t *testing.T) (*Registry, *timesource.Fake) {
	t.Helper()
	f := timesource.NewFake(base)
	return NewRegistry(f), f
}

// newAheadRegistry is newFakeRegistry admitting progress up to an hour
// ahead of its fake clock: the progress and observer tests report ticks
// that the fake clock, which stays at base, has not reached.
func newAheadRegistry(t *testing.T) (*Registry, *timesource.Fake) {
	t.Helper()
	r, f := newFakeRegistry(t)
	r.SetMaxClockOffset(time.Hour)
	return r, f
}

func install(t *testing.T, r *Registry, domain string, lc Lifecycle) {
	t.Helper()
	_, err := r.Install(domain, lc)
	require.NoError(t, err)
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// requireClockErr asserts err is a *ClockError wrapping want, for domain.
func requireClockErr(t *testing.T, err error, want error, domain string) *ClockError {
	t.Helper()
	require.ErrorIs(t, err, want)
	var ce *ClockError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, domain, ce.Domain)
	return ce
}

var errCause = errorString("cause")

type errorString string

func (e errorString) Error() string { return string(e) }

func contains(list []error, e error) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
