package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/wire"
)

// staleEngine is a node that reports the interruption it is given.
type staleEngine struct {
	*node.Node
	in *clockrt.Interruption
}

func (e staleEngine) Interruption() *clockrt.Interruption { return e.in }

func TestReadsWarnOnANodeThatCannotVouch(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN d WITH PERIOD 1s SKEW 1s;")
	reads := []string{"LIST DOMAINS;", "DESCRIBE DOMAIN d;", "SHOW CLUSTER STATUS;", "ATTACH DOMAIN CLOCK;"}
	for _, tt := range []struct {
		name string
		in   *clockrt.Interruption
	}{
		{"vouching", nil},
		{"interrupted", &clockrt.Interruption{Cause: "node n3 has not heard from the cluster's leader"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(staleEngine{e.node, tt.in}, Options{Logger: quietLogger(), TimeSource: e.fake})
			defer s.Close()
			_, err := s.ExecText(e.ctx, "USE d;")
			require.NoError(t, err)
			for _, stmt := range reads {
				rs, err := s.ExecText(e.ctx, stmt)
				require.NoError(t, err, stmt)
				var warned []string
				for _, w := range rs[len(rs)-1].Warnings {
					if strings.Contains(w, "cannot vouch for what it read") {
						warned = append(warned, w)
					}
				}
				if tt.in == nil {
					require.Empty(t, warned, stmt)
					continue
				}
				require.Len(t, warned, 1, stmt)
				require.Contains(t, warned[0], tt.in.Cause, "%s says why", stmt)
			}
			// A write carries no stale-read warning.
			rs, err := s.ExecText(e.ctx, "DETACH DOMAIN CLOCK;")
			require.NoError(t, err)
			require.Empty(t, rs[0].Warnings)
		})
	}
}

// confirmingEngine is a node whose read confirmation the test controls.
type confirmingEngine struct {
	*node.Node
	err   error
	calls *int
}

func (e confirmingEngine) ConfirmRead(context.Context) error {
	*e.calls++
	return e.err
}

func TestReadConsistencyLevels(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN d WITH PERIOD 1s SKEW 1s;")
	errNoLeader := errors.New("no leader answered")
	reads := []string{"LIST DOMAINS;", "DESCRIBE DOMAIN d;", "SHOW CLUSTER STATUS;", "ATTACH DOMAIN CLOCK;"}
	tests := []struct {
		name  string
		level ReadConsistency
		err   error
		// confirms: each read asks the engine to confirm it.
		confirms bool
	}{
		{"local reads confirm nothing", ReadLocal, errNoLeader, false},
		{"the default is local", "", errNoLeader, false},
		{"linearizable reads are confirmed", ReadLinearizable, nil, true},
		{"an unconfirmed linearizable read is refused", ReadLinearizable, errNoLeader, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			s := New(confirmingEngine{e.node, tt.err, &calls}, Options{Logger: quietLogger(), TimeSource: e.fake, ReadConsistency: tt.level})
			defer s.Close()
			_, err := s.ExecText(e.ctx, "USE d;")
			require.NoError(t, err)
			require.Zero(t, calls, "USE is no read")
			for i, stmt := range reads {
				_, err := s.ExecText(e.ctx, stmt)
				if !tt.confirms {
					require.NoError(t, err, stmt)
					require.Zero(t, calls, stmt)
					continue
				}
				require.Equal(t, i+1, calls, "%s is confirmed once", stmt)
				if tt.err == nil {
					require.NoError(t, err, stmt)
					continue
				}
				require.ErrorIs(t, err, ErrReadNotConfirmed, stmt)
				require.ErrorIs(t, err, errNoLeader, "%s says why", stmt)
				require.Equal(t, "read_not_confirmed", wire.CodeOf(err))
			}
			// A write is confirmed by its commit, not by a read barrier.
			before := calls
			_, err = s.ExecText(e.ctx, "CREATE DOMAIN w_"+strings.ReplaceAll(strings.ToLower(tt.name[:3]), " ", "_")+";")
			require.NoError(t, err)
			require.Equal(t, before, calls)
		})
	}
}

func TestParseReadConsistency(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want ReadConsistency
		ok   bool
	}{
		{"", ReadLocal, true}, {"local", ReadLocal, true}, {"linearizable", ReadLinearizable, true},
		{"LINEARIZABLE", "", false}, {"strong", "", false}, {"local ", "", false},
	} {
		got, err := ParseReadConsistency(tt.in)
		if !tt.ok {
			require.Error(t, err, "%q", tt.in)
			require.Contains(t, err.Error(), "use local or linearizable")
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		require.Equal(t, tt.want, got)
	}
}

func FuzzParseReadConsistency(f *testing.F) {
	for _, s := range []string{"", "local", "linearizable", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseReadConsistency(s)
		if err == nil && got != ReadLocal && got != ReadLinearizable {
			t.Fatalf("%q parsed as %q", s, got)
		}
	})
}
