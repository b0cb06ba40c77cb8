package nspl

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// rootSentinels is every sentinel errors.go declares, by name.
// TestRootSentinels holds it to the file, so a sentinel added there is
// added here, and the exactly-one checks below see it.
var rootSentinels = map[string]error{
	"ErrClosed":             ErrClosed,
	"ErrDomainExists":       ErrDomainExists,
	"ErrNotFound":           ErrNotFound,
	"ErrDomainRunning":      ErrDomainRunning,
	"ErrAlreadyRunning":     ErrAlreadyRunning,
	"ErrAlreadyStopped":     ErrAlreadyStopped,
	"ErrInvalidPeriod":      ErrInvalidPeriod,
	"ErrNoLiveVoter":        ErrNoLiveVoter,
	"ErrDomainLimit":        ErrDomainLimit,
	"ErrNoActiveDomain":     ErrNoActiveDomain,
	"ErrAlreadyAttached":    ErrAlreadyAttached,
	"ErrNotAttached":        ErrNotAttached,
	"ErrInTransaction":      ErrInTransaction,
	"ErrNotInTransaction":   ErrNotInTransaction,
	"ErrNestedTransaction":  ErrNestedTransaction,
	"ErrTransactionFull":    ErrTransactionFull,
	"ErrTransactionExpired": ErrTransactionExpired,
	"ErrFrameTooLarge":      ErrFrameTooLarge,
	"ErrSyntax":             ErrSyntax,
	"ErrInvalidName":        ErrInvalidName,
	"ErrInvalidPattern":     ErrInvalidPattern,
	"ErrInvalidDuration":    ErrInvalidDuration,
	"ErrInvalidTimestamp":   ErrInvalidTimestamp,
	"ErrInvalidRate":        ErrInvalidRate,
	"ErrInvalidPath":        ErrInvalidPath,
	"ErrNotReadable":        ErrNotReadable,
	"ErrOverflow":           ErrOverflow,
	"ErrClockOverflow":      ErrClockOverflow,
	"ErrDataDir":            ErrDataDir,
	"ErrOutcomeUnknown":     ErrOutcomeUnknown,
	"ErrTimeout":            ErrTimeout,
}

// requireExactlyOne checks the contract of errors.go for err: it matches
// the root sentinel named want and no other.
func requireExactlyOne(t *testing.T, err error, want string) {
	t.Helper()
	var matched []string
	for name, sentinel := range rootSentinels {
		if errors.Is(err, sentinel) {
			matched = append(matched, name)
		}
	}
	slices.Sort(matched)
	require.Equal(t, []string{want}, matched, "%q must match exactly one root sentinel", err)
}

// TestRootSentinels holds errors.go's exactly-one contract at its base: the
// sentinels rootSentinels lists are the ones errors.go declares, and no one
// of them matches another, so an error that is one of them is no other.
func TestRootSentinels(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	require.NoError(t, err)
	var declared []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					declared = append(declared, n.Name)
				}
			}
		}
	}
	var listed []string
	for name := range rootSentinels {
		listed = append(listed, name)
	}
	slices.Sort(declared)
	slices.Sort(listed)
	require.Equal(t, declared, listed, "rootSentinels lists exactly the sentinels errors.go declares")
	for name, sentinel := range rootSentinels {
		requireExactlyOne(t, sentinel, name)
	}
}

// positionPrefix is how a *grammar.Error prints its position.
var positionPrefix = regexp.MustCompile(`^\d+:\d+: `)

// TestClosedPathsMatchErrClosedAlone holds the one closed error: every call
// on a closed engine, root session, session, node or client, and a
// statement a server's session refused because its node had closed,
// returns ErrClosed, which is the closed error of session, node, client and
// wire too, matches no other root sentinel, carries no statement position
// and says what to do.
func TestClosedPathsMatchErrClosedAlone(t *testing.T) {
	closedNames := map[string]error{"session.ErrClosed": session.ErrClosed, "client.ErrClosed": client.ErrClosed,
		"node.ErrClosed": node.ErrClosed, "wire.ErrClosed": wire.ErrClosed}
	for name, closed := range closedNames {
		require.Same(t, ErrClosed, closed, "%s is the one closed sentinel, not a copy", name)
	}
	list := planner.ListDomains{}
	tests := []struct {
		name string
		// closed closes what it set up on eng and returns the error of one
		// call on it.
		closed func(t *testing.T, ctx context.Context, eng *Engine) error
	}{
		{"session after Close: ExecText", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.ExecText(ctx, "LIST DOMAINS;")
			return err
		}},
		{"session after Close: Exec", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.Exec(ctx, ListDomains())
			return err
		}},
		{"session after Close: text that does not parse", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.ExecText(ctx, "LIST DOMAINZ;")
			return err
		}},
		{"session after Close: no statement", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.Exec(ctx)
			return err
		}},
		{"session after Close: NextEvent", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.NextEvent(ctx)
			return err
		}},
		{"session after Close: DomainNames", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := closedSession(t, eng)
			_, err := s.DomainNames(ctx)
			return err
		}},
		{"session after Engine.Close: ExecText", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s, err := eng.NewSession()
			require.NoError(t, err)
			require.NoError(t, eng.Close())
			_, err = s.ExecText(ctx, "USE prod;")
			return err
		}},
		{"session after Engine.Close: NextEvent", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s, err := eng.NewSession()
			require.NoError(t, err)
			require.NoError(t, eng.Close())
			_, err = s.NextEvent(ctx)
			return err
		}},
		{"engine after Close: NewSession", func(t *testing.T, ctx context.Context, eng *Engine) error {
			require.NoError(t, eng.Close())
			_, err := eng.NewSession()
			return err
		}},
		{"engine after Close: ServeConsole", func(t *testing.T, ctx context.Context, eng *Engine) error {
			require.NoError(t, eng.Close())
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			return eng.ServeConsole(ctx, ln, ConsoleOptions{})
		}},
		{"session package after Close: Exec", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := session.New(eng.node, session.Options{Logger: eng.logger})
			require.NoError(t, s.Close())
			_, err := s.Exec(ctx, list)
			return err
		}},
		{"session package after Close: ExecText", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := session.New(eng.node, session.Options{Logger: eng.logger})
			require.NoError(t, s.Close())
			_, err := s.ExecText(ctx, "LIST DOMAINS;")
			return err
		}},
		{"session package after Close: text that does not parse", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := session.New(eng.node, session.Options{Logger: eng.logger})
			require.NoError(t, s.Close())
			_, err := s.ExecText(ctx, "LIST DOMAINZ;")
			return err
		}},
		{"session package after Close: NextFrame", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := session.New(eng.node, session.Options{Logger: eng.logger})
			require.NoError(t, s.Close())
			_, err := s.NextFrame(ctx)
			return err
		}},
		{"session package on a closed node: a write", func(t *testing.T, ctx context.Context, eng *Engine) error {
			s := session.New(eng.node, session.Options{Logger: eng.logger})
			defer s.Close()
			require.NoError(t, eng.node.Close())
			_, err := s.ExecText(ctx, "CREATE DOMAIN late;")
			return err
		}},
		{"client after Close: ExecText", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			require.NoError(t, c.Close())
			_, err := c.ExecText(ctx, "LIST DOMAINS;")
			return err
		}},
		{"client after Close: text that does not parse", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			require.NoError(t, c.Close())
			_, err := c.ExecText(ctx, "LIST DOMAINZ;")
			return err
		}},
		{"client after Close: Exec", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			require.NoError(t, c.Close())
			_, err := c.Exec(ctx, list)
			return err
		}},
		{"client after Close: NextEvent", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			require.NoError(t, c.Close())
			_, err := c.NextEvent(ctx)
			return err
		}},
		{"client after Close: DomainNames", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			require.NoError(t, c.Close())
			_, err := c.DomainNames(ctx)
			return err
		}},
		{"remote session whose server's node closed", func(t *testing.T, ctx context.Context, eng *Engine) error {
			c := dialConsole(t, ctx, eng)
			defer c.Close()
			// The server keeps serving the open session; its node is gone.
			require.NoError(t, eng.node.Close())
			_, err := c.ExecText(ctx, "LIST DOMAINS;\nCREATE DOMAIN late;")
			var re *wire.RemoteError
			require.ErrorAs(t, err, &re, "the refusal is the server's")
			require.Equal(t, "session_closed", re.Code)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, _ := openEngine(t)
			defer func() { require.NoError(t, eng.Close()) }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := tt.closed(t, ctx, eng)
			requireExactlyOne(t, err, "ErrClosed")
			for name, closed := range closedNames {
				require.ErrorIs(t, err, closed, "errors.Is(err, %s)", name)
			}
			var pe *Error
			require.False(t, errors.As(err, &pe), "a closed error is no statement's: %q is positioned at %v", err, pe)
			require.NotRegexp(t, positionPrefix, err.Error())
			require.Contains(t, err.Error(), "open a new one", "the message says what to do")
		})
	}
}

// closedSession opens a session on eng and closes it.
func closedSession(t *testing.T, eng *Engine) *Session {
	t.Helper()
	s, err := eng.NewSession()
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return s
}

// dialConsole serves eng's session protocol on a loopback listener until the
// test ends and returns a client connected to it.
func dialConsole(t *testing.T, ctx context.Context, eng *Engine) *client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- eng.ServeConsole(serveCtx, ln, ConsoleOptions{}) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-served)
	})
	c, err := client.Dial(ctx, client.Config{URLs: []string{"http://" + ln.Addr().String()}, Logger: eng.logger})
	require.NoError(t, err)
	return c
}
