package nspl_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/internal/testcluster"
)

var _ nspl.Follower = (*client.Client)(nil)

// followThreeTicks is one program written against nspl.Follower: it creates
// and starts a paced domain, follows its clock until a third tick, projects
// the followed clock and detaches. It reports what it saw in lines that do
// not depend on timing.
func followThreeTicks(ctx context.Context, f nspl.Follower, domain string) ([]string, error) {
	script, err := nspl.Script(nspl.CreatePaced(domain, 50*time.Millisecond, 10*time.Millisecond),
		nspl.Use(domain), nspl.Start().AtNow(), nspl.Attach())
	if err != nil {
		return nil, err
	}
	results, err := f.ExecText(ctx, script)
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
		c, ok := f.Clock(strings.ToUpper(domain)) // names are case-insensitive on both
		if !ok {
			return nil, fmt.Errorf("domain %q is not followed after a tick event", domain)
		}
		if c.Tick.ID < last {
			return nil, fmt.Errorf("followed clock at tick %d behind its event's tick %d", c.Tick.ID, last)
		}
		if _, err := c.LogicalAt(c.Tick.AuthorityTime()); err != nil {
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
	if _, err := f.ExecText(ctx, nspl.Start().AtNow().String()); !errors.Is(err, nspl.ErrAlreadyRunning) {
		return nil, fmt.Errorf("START of the running domain: %v, want nspl.ErrAlreadyRunning", err)
	}
	if _, err := f.ExecText(ctx, nspl.Detach().String()); err != nil {
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
		eng, err := nspl.Open(ctx, nspl.Options{Logger: logger})
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
		tc := testcluster.New(t, testcluster.Options{Logger: logger})
		t.Cleanup(func() { require.NoError(t, tc.Close()) })
		members := tc.StartThree()
		// The session server runs on the last member to join; statements
		// it does not lead go through the leader.
		url := tc.ServeSessions(members[2])
		c, err := client.Dial(ctx, client.Config{URLs: []string{url}, TLS: tc.ClientTLS("alice"), Logger: logger})
		require.NoError(t, err)
		defer func() { require.NoError(t, c.Close()) }()
		got, err := followThreeTicks(ctx, c, "prod")
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}
