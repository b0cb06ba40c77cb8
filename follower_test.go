package nspl_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/server"
)

var _ nspl.Follower = (*client.Client)(nil)

// followThreeTicks is one program written against nspl.Follower: it creates
// and starts a paced domain, follows its clock until a third tick, projects
// the followed clock and detaches. It reports what it saw in lines that do
// not depend on timing.
func followThreeTicks(ctx context.Context, f nspl.Follower, domain string) ([]string, error) {
	results, err := f.ExecText(ctx, "CREATE PACED DOMAIN "+domain+" WITH PERIOD 50ms SKEW 10ms; USE "+domain+
		"; START AT NOW; ATTACH DOMAIN CLOCK;")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range results {
		msg, _, _ := strings.Cut(r.Message, ":")
		out = append(out, msg)
	}
	var last uint64
	for ev := range f.Events(ctx) {
		if ev.Domain != domain || ev.Kind != nspl.EventTick {
			continue
		}
		if ev.Clock.Tick.ID <= last {
			return nil, fmt.Errorf("tick %d after tick %d", ev.Clock.Tick.ID, last)
		}
		last = ev.Clock.Tick.ID
		c, ok := f.Clock(domain)
		if !ok {
			return nil, fmt.Errorf("domain %q is not followed after a tick event", domain)
		}
		if c.Tick.ID < last {
			return nil, fmt.Errorf("followed clock at tick %d behind its event's tick %d", c.Tick.ID, last)
		}
		if _, err := c.LogicalAt(c.Tick.AuthorityUTC); err != nil {
			return nil, err
		}
		if last >= 3 {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out = append(out, "ticked at least 3 times")
	if _, err := f.ExecText(ctx, "DETACH DOMAIN CLOCK;"); err != nil {
		return nil, err
	}
	if _, ok := f.Clock(domain); ok {
		return nil, fmt.Errorf("domain %q is still followed after DETACH", domain)
	}
	return append(out, "detached"), nil
}

// The same program follows a clock on an embedded engine and, through the
// remote client over mutual TLS, on a three-node cluster, with the same
// outcome.
func TestOneProgramFollowsEmbeddedAndCluster(t *testing.T) {
	want := []string{
		"created domain 'prod'",
		"using domain 'prod'",
		"started domain 'prod'",
		"attached to the clock of domain 'prod'",
		"ticked at least 3 times",
		"detached",
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Run("embedded", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		eng, err := nspl.Open(ctx, nspl.Options{Logger: logger, RaftLogLevel: slog.LevelError})
		require.NoError(t, err)
		defer func() { require.NoError(t, eng.Close()) }()
		sess, err := eng.NewSession()
		require.NoError(t, err)
		got, err := followThreeTicks(ctx, sess, "prod")
		require.NoError(t, err)
		require.Equal(t, want, got)
	})

	t.Run("cluster", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ca := testpki.New(t)
		members := startThree(t, ctx, ca, logger)
		// The session server runs on the last member to join; statements
		// it does not lead go through the leader.
		url := serveSessions(t, members[2], logger)
		c, err := client.Dial(ctx, client.Config{URLs: []string{url}, TLS: ca.Client("alice").ClientConfig("", ""), Logger: logger})
		require.NoError(t, err)
		defer func() { require.NoError(t, c.Close()) }()
		got, err := followThreeTicks(ctx, c, "prod")
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}

// startThree starts a bootstrapping member and two that join it, on
// loopback with raft and the interconnect over TLS.
func startThree(t *testing.T, ctx context.Context, ca *testpki.Authority, logger *slog.Logger) []*cluster.Member {
	t.Helper()
	var members []*cluster.Member
	t.Cleanup(func() {
		for i := len(members) - 1; i >= 0; i-- {
			require.NoError(t, members[i].Close())
		}
	})
	for i, name := range []string{"n1", "n2", "n3"} {
		cfg := cluster.Config{Node: name, RaftListener: listen(t), Listener: listen(t), Bootstrap: i == 0,
			Material: ca.Node(name, "127.0.0.1"), Logger: logger, RaftLogLevel: slog.LevelError}
		if i > 0 {
			cfg.Join = []string{members[0].APIAddr()}
		}
		m, err := cluster.Start(ctx, cfg)
		require.NoError(t, err)
		members = append(members, m)
	}
	return members
}

// serveSessions serves the session protocol for m on a loopback port over
// mutual TLS and returns its URL.
func serveSessions(t *testing.T, m *cluster.Member, logger *slog.Logger) string {
	t.Helper()
	srv, err := server.New(server.Config{Node: m.Node(), TLS: m.Material().ServerConfig(pki.ServerOptions{}), Logger: logger})
	require.NoError(t, err)
	ln := listen(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		wg.Wait()
	})
	return "https://" + ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}
