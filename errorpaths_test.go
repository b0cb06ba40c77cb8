package nspl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// sentinelPath is one way into an engine that a root sentinel must come out
// of alike: an embedded session or a remote client over a served session.
type sentinelPath struct {
	name   string
	remote bool
}

// sentinelEnv is what a row of TestEveryRootSentinelOnBothPaths produces
// its failure with: a fresh engine, its fake clock, and a Follower of the
// path on it (open opens one on eng, or on a node refusing as the layers
// below it would, see refusingNode).
type sentinelEnv struct {
	eng  *Engine
	fake *timesource.Fake
	path sentinelPath
	d    string // a domain name of this path's own
	at   string // where a statement's failure is positioned in its text
	fol  func(t *testing.T, ctx context.Context) Follower
}

// f returns the row's Follower of the path on the engine, the one its
// setup ran on.
func (e sentinelEnv) f(t *testing.T, ctx context.Context) Follower { return e.fol(t, ctx) }

// lastInstantText is the last representable instant as a timestamp
// literal: a clock started there leaves the range at its first tick.
const lastInstantText = "'2262-04-11T23:47:16.854775807Z'"

// openEngineWith is openEngine with opts (its TimeSource and Logger are
// the test's), on the system clock when system is set.
func openEngineWith(t *testing.T, opts Options, system bool) (*Engine, *timesource.Fake) {
	t.Helper()
	fake := timesource.NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts.TimeSource = fake
	if system {
		opts.TimeSource = timesource.System()
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := Open(ctx, opts)
	require.NoError(t, err)
	return eng, fake
}

// failText runs text on f, which must fail at its last statement, and
// checks the failure is a statement's: a positioned *Error pointing at
// the first place at appears in text (all of text is one line).
func failText(t *testing.T, ctx context.Context, f Follower, text, at string) error {
	t.Helper()
	rs, err := f.ExecText(ctx, text)
	require.Error(t, err, "%s must fail", text)
	require.Len(t, rs, strings.Count(text, ";")-1, "the statements before the failing one ran")
	idx := strings.Index(text, at)
	require.GreaterOrEqual(t, idx, 0, "%q is in %q", at, text)
	var pe *Error
	require.ErrorAs(t, err, &pe, "a statement's failure is positioned")
	require.Equal(t, Position{Offset: idx, Line: 1, Column: idx + 1}, pe.Pos, "%q is positioned at %q", err, at)
	return err
}

// follower returns a Follower of e's path on eng's node, or on n when it
// is not nil, with opts for its session (the server's, remotely).
func (e sentinelEnv) follower(t *testing.T, ctx context.Context, n server.Engine, opts session.Options) Follower {
	t.Helper()
	if n == nil {
		n = e.eng.node
	}
	opts.Logger = e.eng.logger
	if opts.FrameLimit == 0 {
		opts.FrameLimit = e.eng.limit
	}
	if opts.TimeSource == nil {
		opts.TimeSource = e.eng.node.TimeSource()
	}
	if !e.path.remote {
		s := newSession(e.eng, session.New(n, opts))
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	srv, err := server.New(server.Config{Node: n, Insecure: true, Logger: e.eng.logger, Session: opts})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	testserve.Serve(t, ln, srv.Serve, srv.Close)
	c, err := client.Dial(ctx, client.Config{URLs: []string{"http://" + ln.Addr().String()}, Logger: e.eng.logger})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// refusingNode is an engine's node whose writes of one kind are refused as
// the layers below a session refuse them where a single healthy node
// cannot be brought to: a catalog that loses its leadership while
// committing (ErrOutcomeUnknown) or does not take a write in time
// (ErrTimeout), a START that finds no live voter (ErrNoLiveVoter). Every
// other call is the real node's.
type refusingNode struct {
	*node.Node
	create func() error
	start  func(d lifecycle.Domain, req lifecycle.StartRequest) error
}

func (n refusingNode) CreateDomain(ctx context.Context, c lifecycle.CreateDomain) (lifecycle.Outcome, error) {
	if n.create != nil {
		return lifecycle.Outcome{}, n.create()
	}
	return n.Node.CreateDomain(ctx, c)
}

func (n refusingNode) Start(ctx context.Context, domain string, req lifecycle.StartRequest) (lifecycle.Outcome, error) {
	if n.start != nil {
		d, err := n.Domain(domain)
		if err != nil {
			return lifecycle.Outcome{}, err
		}
		return lifecycle.Outcome{}, n.start(d, req)
	}
	return n.Node.Start(ctx, domain, req)
}

// TestEveryRootSentinelOnBothPaths holds errors.go's contract for every
// root sentinel on both ways in: produced by a real statement (or, for the
// followed-clock sentinels and ErrDataDir, a real call) on an embedded
// session and on a remote client over a served session, the failure
// matches with errors.Is exactly that one root sentinel, and a statement's
// failure is a positioned *Error at the failing statement (the offending
// token, for text that does not parse) while a call's and a closed path's
// carry no position. A sentinel one path cannot produce names the reason
// in its row. Over the remote path every refusal but the client's own
// (text it cannot parse, a clock it reads) crosses the wire as a code, so
// this is also the test of the code table end to end.
func TestEveryRootSentinelOnBothPaths(t *testing.T) {
	paths := []sentinelPath{{"embedded", false}, {"remote", true}}
	type row struct {
		sentinel string
		setup    string // statements that succeed first; $d is the path's domain
		fail     string // the text whose last statement fails
		at       string // where in fail the position points; "" for no position
		// produce, when set, produces the failure instead of fail.
		produce func(t *testing.T, ctx context.Context, env sentinelEnv) error
		opts    Options // for the row's engine
		// system runs the row's engine on the system clock: a clock
		// started at the last instant leaves the range in its projection
		// only once time has passed since its anchor, which a fake clock
		// never lets happen before the next tick is computed.
		system bool
		// notOn names a path the sentinel cannot come out of, and why.
		notOn, why string
	}
	rows := []row{
		{sentinel: "ErrClosed", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			f := env.follower(t, ctx, nil, session.Options{})
			if env.path.remote {
				// The server's session stays open; its node closes under it,
				// so the refusal crosses the wire as session_closed.
				require.NoError(t, env.eng.node.Close())
				_, err := f.ExecText(ctx, "LIST DOMAINS;\nCREATE DOMAIN late;")
				var re *wire.RemoteError
				require.ErrorAs(t, err, &re, "the refusal is the server's")
				return err
			}
			require.NoError(t, f.(*Session).Close())
			_, err := f.ExecText(ctx, "LIST DOMAINS;")
			return err
		}},
		{sentinel: "ErrDomainExists", setup: "CREATE DOMAIN $d;", fail: "LIST DOMAINS; CREATE DOMAIN $d;", at: "CREATE DOMAIN $d;"},
		{sentinel: "ErrNotFound", fail: "LIST DOMAINS; USE $d;", at: "USE $d;"},
		{sentinel: "ErrDomainRunning", setup: "CREATE DOMAIN $d; USE $d; START AT NOW;", fail: "LIST DOMAINS; DROP DOMAIN $d;", at: "DROP"},
		{sentinel: "ErrAlreadyRunning", setup: "CREATE DOMAIN $d; USE $d; START AT NOW;", fail: "LIST DOMAINS; START AT NOW;", at: "START"},
		{sentinel: "ErrAlreadyStopped", setup: "CREATE DOMAIN $d; USE $d; START AT NOW; STOP;", fail: "LIST DOMAINS; STOP;", at: "STOP"},
		{sentinel: "ErrDomainLimit", opts: Options{MaxDomains: 2}, setup: "CREATE DOMAIN $d; CREATE DOMAIN b$d;", fail: "LIST DOMAINS; CREATE DOMAIN c$d;", at: "CREATE DOMAIN c$d;"},
		{sentinel: "ErrInvalidPeriod", fail: "LIST DOMAINS; CREATE PACED DOMAIN $d WITH PERIOD 0s SKEW 0s;", at: "0s"},
		{sentinel: "ErrNoLiveVoter", at: "START", setup: "CREATE PACED DOMAIN $d WITH PERIOD 1s SKEW 0s;", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			// A node that sees no live voter: the real start resolution,
			// given no available incarnation (one node is always its own).
			n := refusingNode{Node: env.eng.node, start: func(d lifecycle.Domain, req lifecycle.StartRequest) error {
				_, err := lifecycle.ResolveStart(d, req, env.fake.Now(), nil, nil, nil)
				return err
			}}
			return failText(t, ctx, env.follower(t, ctx, n, session.Options{}), "USE "+env.d+"; START AT NOW;", env.at)
		}},
		{sentinel: "ErrNoActiveDomain", fail: "LIST DOMAINS; STOP;", at: "STOP"},
		{sentinel: "ErrAlreadyAttached", setup: "CREATE DOMAIN $d; USE $d; ATTACH DOMAIN CLOCK;", fail: "LIST DOMAINS; ATTACH DOMAIN CLOCK;", at: "ATTACH"},
		{sentinel: "ErrNotAttached", setup: "CREATE DOMAIN $d; USE $d;", fail: "LIST DOMAINS; DETACH DOMAIN CLOCK;", at: "DETACH"},
		{sentinel: "ErrInTransaction", setup: "CREATE DOMAIN $d; USE $d; BEGIN;", fail: "START AT NOW; CREATE DOMAIN other;", at: "CREATE"},
		{sentinel: "ErrNotInTransaction", fail: "LIST DOMAINS; COMMIT;", at: "COMMIT"},
		{sentinel: "ErrNestedTransaction", setup: "CREATE DOMAIN $d; USE $d; BEGIN;", fail: "START AT NOW; BEGIN;", at: "BEGIN"},
		{sentinel: "ErrTransactionFull",
			setup: "CREATE DOMAIN $d; USE $d; BEGIN;" + strings.Repeat(" START AT NOW; STOP;", session.DefaultMaxTransactionSteps/2),
			fail:  "SHOW TRANSACTIONS; START AT NOW;", at: "START"},
		{sentinel: "ErrTransactionExpired", at: "START", setup: "CREATE DOMAIN $d; USE $d; BEGIN;", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			env.fake.Advance(session.DefaultTransactionIdleTimeout + time.Minute)
			return failText(t, ctx, env.f(t, ctx), "START AT NOW;", env.at)
		}},
		{sentinel: "ErrFrameTooLarge", opts: Options{FrameLimit: 64}, setup: "CREATE PACED DOMAIN $d WITH PERIOD 1s SKEW 0s; USE $d; START AT NOW;",
			fail: "LIST DOMAINS; ATTACH DOMAIN CLOCK;", at: "ATTACH"},

		{sentinel: "ErrSyntax", fail: "LIST DOMAINS; LIST DOMAINZ;", at: "DOMAINZ"},
		{sentinel: "ErrInvalidName", fail: "LIST DOMAINS; CREATE DOMAIN `a b`;", at: "`a b`"},
		{sentinel: "ErrInvalidPattern", fail: "LIST DOMAINS; LIST DOMAINS LIKE '';", at: "''"},
		{sentinel: "ErrInvalidDuration", fail: "LIST DOMAINS; CREATE PACED DOMAIN $d WITH PERIOD 99999999999h SKEW 0s;", at: "99999999999h"},
		{sentinel: "ErrInvalidTimestamp", setup: "CREATE DOMAIN $d; USE $d;", fail: "LIST DOMAINS; START AT '2262-04-12T00:00:00Z';", at: "'2262-04-12T00:00:00Z'"},
		{sentinel: "ErrInvalidRate", setup: "CREATE DOMAIN $d; USE $d;", fail: "LIST DOMAINS; START AT NOW TIME RATE 0;", at: "0;"},
		{sentinel: "ErrInvalidPath", fail: "LIST DOMAINS; DESCRIBE BACKUP '';", at: "''"},

		{sentinel: "ErrNotReadable", setup: "CREATE PACED DOMAIN $d WITH PERIOD 1s SKEW 0s; USE $d; ATTACH DOMAIN CLOCK;", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			c, ok := env.f(t, ctx).Clock(env.d)
			require.True(t, ok, "the clock is followed")
			_, err := c.LogicalAt(time.Unix(0, env.fake.Now()))
			return err
		}},
		{sentinel: "ErrOverflow", setup: "CREATE PACED DOMAIN $d WITH PERIOD 1s SKEW 0s; USE $d; START AT NOW TIME RATE 1000; ATTACH DOMAIN CLOCK;", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			c, ok := env.f(t, ctx).Clock(env.d)
			require.True(t, ok, "the clock is followed")
			_, err := c.LogicalAt(time.Unix(0, math.MaxInt64))
			return err
		}},
		{sentinel: "ErrClockOverflow", system: true, setup: "CREATE PACED DOMAIN $d WITH PERIOD 1s SKEW 0s; USE $d; ATTACH DOMAIN CLOCK; START AT " + lastInstantText + ";", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			for ev := range env.f(t, ctx).Events(ctx) {
				if ev.Kind == EventError && ev.Domain == env.d {
					require.NotNil(t, ev.Failure, "an error event carries its failure")
					return ev.Failure
				}
			}
			return fmt.Errorf("no error event: %w", ctx.Err())
		}},

		{sentinel: "ErrDataDir", notOn: "remote", why: "a data directory is the embedding process's: a remote client never names one, and a server that cannot use its own does not serve", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			dir := t.TempDir()
			first, err := Open(ctx, Options{DataDir: dir, Logger: env.eng.logger})
			require.NoError(t, err)
			defer func() { require.NoError(t, first.Close()) }()
			second, err := Open(ctx, Options{DataDir: dir, Logger: env.eng.logger})
			if err == nil {
				_ = second.Close()
			}
			return err
		}},
		{sentinel: "ErrOutcomeUnknown", at: "CREATE", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			n := refusingNode{Node: env.eng.node, create: func() error { return catalog.ErrLeadershipLost }}
			return failText(t, ctx, env.follower(t, ctx, n, session.Options{}), "LIST DOMAINS; CREATE DOMAIN "+env.d+";", env.at)
		}},
		{sentinel: "ErrTimeout", at: "CREATE", produce: func(t *testing.T, ctx context.Context, env sentinelEnv) error {
			n := refusingNode{Node: env.eng.node, create: func() error { return fmt.Errorf("propose: %w", catalog.ErrTimeout) }}
			return failText(t, ctx, env.follower(t, ctx, n, session.Options{}), "LIST DOMAINS; CREATE DOMAIN "+env.d+";", env.at)
		}},
	}

	covered := map[string]bool{}
	for _, r := range rows {
		require.Contains(t, rootSentinels, r.sentinel)
		require.False(t, covered[r.sentinel], "%s has one row", r.sentinel)
		covered[r.sentinel] = true
	}
	for name := range rootSentinels {
		require.True(t, covered[name], "root sentinel %s has no row", name)
	}

	for _, r := range rows {
		for _, p := range paths {
			t.Run(r.sentinel+"/"+p.name, func(t *testing.T) {
				if r.notOn == p.name {
					require.NotEmpty(t, r.why, "a path a sentinel cannot come out of says why")
					t.Skip(r.why)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				eng, fake := openEngineWith(t, r.opts, r.system)
				defer func() { require.NoError(t, eng.Close()) }()
				env := sentinelEnv{eng: eng, fake: fake, path: p, d: "d_" + p.name, at: strings.ReplaceAll(r.at, "$d", "d_"+p.name)}
				var f Follower
				env.fol = func(t *testing.T, ctx context.Context) Follower {
					if f == nil {
						f = env.follower(t, ctx, nil, session.Options{})
					}
					return f
				}
				if r.setup != "" {
					_, err := env.f(t, ctx).ExecText(ctx, strings.ReplaceAll(r.setup, "$d", env.d))
					require.NoError(t, err, "setup")
				}
				var err error
				if r.produce != nil {
					err = r.produce(t, ctx, env)
				} else {
					err = failText(t, ctx, env.f(t, ctx), strings.ReplaceAll(r.fail, "$d", env.d), env.at)
				}
				requireExactlyOne(t, err, r.sentinel)
				if r.at == "" {
					var pe *Error
					require.False(t, errors.As(err, &pe), "%q is no statement's failure and carries no position", err)
				}
			})
		}
	}
}
