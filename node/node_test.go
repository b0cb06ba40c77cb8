package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/runtime"
	"github.com/nspl-dev/nspl/runtime/clock"
	"github.com/nspl-dev/nspl/runtime/timesource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake UTC every test starts at: 2026-01-01T00:00:00Z.
const t0 = int64(1767225600) * int64(time.Second)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openNode(t *testing.T, fake *timesource.Fake, dir string) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{DataDir: dir, Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake})
	require.NoError(t, err)
	return n
}

func paced(name string, period, skew time.Duration) planner.CreateDomain {
	return planner.CreateDomain{Name: name, Pace: lifecycle.Paced, Period: uint64(period), Skew: uint64(skew)}
}

// waitTick waits, on the observer's notifications and never on a sleep,
// until the domain's accepted tick reaches id.
func waitTick(t *testing.T, n *Node, domain string, id uint64) runtime.Observation {
	t.Helper()
	o, err := n.Observe(domain)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		obs := o.Read()
		if obs.Tick.ID >= id {
			return obs
		}
		require.NoError(t, o.Wait(ctx), "waiting for tick %d of %q, have %+v", id, domain, obs)
	}
}

func TestLifecycleThroughHandler(t *testing.T) {
	fake := timesource.NewFake(t0)
	n := openNode(t, fake, "")
	defer func() { require.NoError(t, n.Close()) }()
	ctx := context.Background()
	require.NoError(t, n.WaitInstalled(ctx))

	out, err := n.CreateDomain(ctx, paced("prod", time.Second, 100*time.Millisecond))
	require.NoError(t, err)
	require.True(t, out.Changed)
	require.Equal(t, runtime.StateStopped, n.Runtime().Current("prod").State())

	_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
	require.ErrorIs(t, err, lifecycle.ErrDomainExists)
	require.EqualError(t, err, "domain 'prod' already exists; use CREATE DOMAIN IF NOT EXISTS or choose another name")

	out, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtTime, At: 1000, Rate: 60})
	require.NoError(t, err)
	require.Equal(t, uint64(1), out.Domain.Generation)
	in := n.Runtime().Current("prod")
	require.Equal(t, runtime.StatePaced, in.State())
	m, _ := in.Mapping()
	require.Equal(t, clock.Mapping{WallStartedAt: t0, LogicalStart: 1000, Rate: 60}, m)
	require.Equal(t, n.Identity(), in.Authority().Identity())

	obs := waitTick(t, n, "prod", 1)
	require.Equal(t, runtime.Tick{Generation: 1, ID: 1, Boundary: 1000, AuthorityUTC: t0}, obs.Tick)

	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	require.Equal(t, runtime.StateStopped, n.Runtime().Current("prod").State())
	require.Equal(t, runtime.Tick{}, n.Runtime().Progress("prod"))

	out, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1})
	require.NoError(t, err)
	require.Equal(t, uint64(2), out.Domain.Generation)
	obs = waitTick(t, n, "prod", 1)
	require.Equal(t, uint64(2), obs.Tick.Generation)

	_, err = n.DropDomain(ctx, planner.DropDomain{Name: "prod"})
	require.ErrorIs(t, err, lifecycle.ErrDomainRunning)
	_, err = n.Stop(ctx, "prod")
	require.NoError(t, err)
	_, err = n.DropDomain(ctx, planner.DropDomain{Name: "prod"})
	require.NoError(t, err)
	require.Equal(t, runtime.StateMissing, n.Runtime().Current("prod").State())
	_, err = n.Domain("prod")
	require.True(t, errors.Is(err, lifecycle.ErrDomainNotFound))
}
