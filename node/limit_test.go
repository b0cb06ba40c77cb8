package node

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/record"
)

// TestDomainLimit holds Config.MaxDomains at, just inside and just outside
// the limit: a CREATE that leaves the catalog at the limit succeeds, the
// next is refused with ErrDomainLimit and proposes nothing, a CREATE of a
// name already there is answered as before, and a restore is refused
// whole when the domains it adds would pass the limit.
func TestDomainLimit(t *testing.T) {
	const limit = 3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.NewFake(t0), MaxDomains: limit})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()

	create := func(name string, ifNotExists bool) error {
		_, err := n.CreateDomain(ctx, lifecycle.CreateDomain{Name: name, IfNotExists: ifNotExists})
		return err
	}
	for i := range limit - 1 {
		require.NoError(t, create(fmt.Sprintf("d%d", i), false), "inside the limit")
	}
	require.NoError(t, create("d2", false), "the CREATE that reaches the limit")
	rev := n.catalog.State().Revision()

	err = create("d3", false)
	require.ErrorIs(t, err, lifecycle.ErrDomainLimit, "past the limit")
	require.ErrorContains(t, err, "the catalog holds 3 domains and this node's limit is 3")
	require.ErrorContains(t, err, "DROP DOMAIN")
	require.ErrorContains(t, err, "--max-domains")
	var le *lifecycle.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, "d3", le.Domain)
	require.Equal(t, rev, n.catalog.State().Revision(), "a refused CREATE proposes nothing")

	require.NoError(t, create("d1", true), "IF NOT EXISTS of a name already there is a no-op at the limit")
	require.ErrorIs(t, create("d1", false), lifecycle.ErrDomainExists, "a name already there is refused as before")

	// A restore that adds one domain past the limit is refused whole.
	_, err = n.DropDomain(ctx, lifecycle.DropDomain{Name: "d0"})
	require.NoError(t, err)
	two := backup.Archive{Version: backup.Version, Scope: backup.ScopeCluster, Node: "n",
		Domains: []backup.Domain{{Record: record.Domain{Name: "r0"}}, {Record: record.Domain{Name: "r1"}}}}
	rev = n.catalog.State().Revision()
	_, err = n.Restore(ctx, backup.RestoreRequest{Cluster: true}, "two.nspl", two)
	require.ErrorIs(t, err, lifecycle.ErrDomainLimit)
	require.ErrorContains(t, err, "so 2 more cannot be added")
	require.Equal(t, rev, n.catalog.State().Revision())
	require.Equal(t, 2, n.catalog.State().Len())
	one := two
	one.Domains = two.Domains[:1]
	_, err = n.Restore(ctx, backup.RestoreRequest{Cluster: true}, "one.nspl", one)
	require.NoError(t, err, "a restore that reaches the limit")
	require.Equal(t, limit, n.catalog.State().Len())
}

func TestDomainLimitConfig(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, Config{Logger: quietLogger(), TimeSource: timesource.NewFake(t0), MaxDomains: -1})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "max domains -1 is negative")

	n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: timesource.NewFake(t0)})
	require.NoError(t, err)
	defer func() { require.NoError(t, n.Close()) }()
	require.Equal(t, DefaultMaxDomains, n.cfg.MaxDomains)
	require.Equal(t, 1_000_000, DefaultMaxDomains)
}
