package nspl_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/internal/testlog"
)

// lastInstant is the last instant of signed Unix nanoseconds: a paced
// clock started there leaves the range as soon as any UTC time passes, so
// its authority's first projection fails.
const lastInstant = "'2262-04-11T23:47:16.854775807Z'"

// awaitClockFailure follows the attached clock of domain on f until its
// error event and checks it is the typed report of the projection leaving
// the range, after a state reporting the generation paced and with no tick
// of that generation after it; then DESCRIBE DOMAIN must show the same
// report.
func awaitClockFailure(ctx context.Context, f nspl.Follower, domain string, generation uint64) error {
	paced := false
	var failure *nspl.ClockEvent
	for ev := range f.Events(ctx) {
		if ev.Domain != domain {
			continue
		}
		switch ev.Kind {
		case nspl.EventState:
			paced = ev.Clock.Observed.Generation == generation && ev.Clock.Observed.State == clock.Paced
		case nspl.EventTick:
			if failure != nil {
				return fmt.Errorf("tick %d after the error event", ev.Clock.Tick.ID)
			}
		case nspl.EventEnd:
			return fmt.Errorf("attachment ended (%v) before the error event", ev.Reason)
		case nspl.EventError:
			ev := ev
			failure = &ev
		}
		if failure != nil {
			break
		}
	}
	if failure == nil {
		return fmt.Errorf("no error event: %w", ctx.Err())
	}
	c, _ := f.Clock(domain)
	if !paced && !(c.Observed.Generation == generation && c.Observed.State == clock.Paced) {
		return fmt.Errorf("error event while the clock is %v", c.Observed)
	}
	fl := failure.Failure
	switch {
	case fl == nil:
		return fmt.Errorf("error event without its failure")
	case fl.Domain != domain || fl.Generation != generation || fl.Op != "project":
		return fmt.Errorf("failure names domain %q generation %d op %q", fl.Domain, fl.Generation, fl.Op)
	case !strings.Contains(fl.Message, "domain clock projection") || !strings.Contains(fl.Message, "falls outside the signed Unix-nanosecond range"):
		return fmt.Errorf("failure report %q does not say the projection left the range", fl.Message)
	case fl.Cause == "" || !strings.Contains(fl.Message, fl.Cause):
		return fmt.Errorf("failure report %q lacks its arithmetic cause %q", fl.Message, fl.Cause)
	case !errors.Is(fl, clockrt.ErrClockOverflow):
		return fmt.Errorf("failure does not match clockrt.ErrClockOverflow")
	}
	rs, err := f.ExecText(ctx, "DESCRIBE DOMAIN "+domain+";")
	if err != nil {
		return err
	}
	set := rs[0].Set
	if got := set.Rows[0][set.Column("clock_failure")]; got.IsNull() || got.Text() != fl.Message {
		return fmt.Errorf("DESCRIBE DOMAIN shows clock_failure %v, want %q", got, fl.Message)
	}
	return nil
}

// requireProducerWarning checks that the authority node logged the
// failure once, as the warning whose error is the full typed report the
// sessions received. The producer logs it before it emits the report, so
// it is written by the time a session sees the failure.
func requireProducerWarning(t *testing.T, logs *testlog.Buffer, node string, report string) {
	t.Helper()
	var mine []testlog.Record
	for _, w := range logs.Records(t, "tick producer stopped producing") {
		if w.Get("node_name") == node {
			mine = append(mine, w)
		}
	}
	require.Len(t, mine, 1, "the authority %q warns once", node)
	require.Equal(t, "WARN", mine[0].Get(slog.LevelKey))
	require.Equal(t, "project", mine[0].Get("op"))
	require.Equal(t, report, mine[0].Get("err"), "the warning renders the report the sessions received")
}

// At the projection limit, the session attached through every node, the
// authority's and its followers', receives the typed error event, DESCRIBE
// DOMAIN on every node shows the failure, and the authority's warning
// renders the same report.
func TestClockFailureAtTheProjectionLimit(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		logs := new(testlog.Buffer)
		eng, err := nspl.Open(ctx, nspl.Options{Logger: logs.Logger(slog.LevelWarn)})
		require.NoError(t, err)
		defer func() { require.NoError(t, eng.Close()) }()
		sess, err := eng.NewSession()
		require.NoError(t, err)
		_, err = sess.ExecText(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; ATTACH DOMAIN CLOCK; START AT "+lastInstant+";")
		require.NoError(t, err)
		require.NoError(t, awaitClockFailure(ctx, sess, "prod", 1))
		c, _ := sess.Clock("prod")
		require.NotNil(t, c.Failure)
		requireProducerWarning(t, logs, "local", c.Failure.Message)
	})

	t.Run("cluster", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		logs := new(testlog.Buffer)
		logger := logs.Logger(slog.LevelWarn)
		tc := testcluster.New(t, testcluster.Options{Logger: logger})
		t.Cleanup(func() { require.NoError(t, tc.Close()) })
		members := tc.StartThree()
		var clients []*client.Client
		for _, m := range members {
			c, err := client.Dial(ctx, client.Config{URLs: []string{tc.ServeSessions(m)},
				TLS: tc.ClientTLS("alice"), Logger: logger})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, c.Close()) })
			clients = append(clients, c)
		}
		_, err := clients[0].ExecText(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s;")
		require.NoError(t, err)
		// CREATE is a completion boundary: every node has installed the
		// domain, so each session attaches at once.
		for _, c := range clients {
			_, err := c.ExecText(ctx, "USE prod; ATTACH DOMAIN CLOCK;")
			require.NoError(t, err)
		}
		_, err = clients[0].ExecText(ctx, "START AT "+lastInstant+";")
		require.NoError(t, err)
		authority := ""
		for _, m := range members {
			if f, ok := m.Node().Producing("prod"); ok {
				authority = f.Authority.Node
			}
		}
		for i, c := range clients {
			require.NoError(t, awaitClockFailure(ctx, c, "prod", 1), "session on %s (authority %q)", members[i].Node().Identity().Node, authority)
		}
		// SHOW CLUSTER STATUS on every member shows the one failure.
		var report string
		for _, m := range members {
			st := m.Status().Wire()
			require.Len(t, st.Domains, 1)
			require.Contains(t, st.Domains[0].ClockFailure, "domain clock projection")
			if report == "" {
				report = st.Domains[0].ClockFailure
			}
			require.Equal(t, report, st.Domains[0].ClockFailure, "every node shows the authority's report")
		}
		// The authority's producer has failed and stays bound to its
		// fence, so the set names it now.
		authority = ""
		for _, m := range members {
			if f, ok := m.Node().Producing("prod"); ok {
				authority = f.Authority.Node
			}
		}
		requireProducerWarning(t, logs, authority, report)
	})
}
