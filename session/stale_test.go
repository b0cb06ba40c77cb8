package session

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/runtime"
)

// staleEngine is a node that reports the interruption it is given.
type staleEngine struct {
	*node.Node
	in *runtime.Interruption
}

func (e staleEngine) Interruption() *runtime.Interruption { return e.in }

func TestReadsWarnOnANodeThatCannotVouch(t *testing.T) {
	e := newEnv(t, Options{})
	e.exec("CREATE PACED DOMAIN d WITH PERIOD 1s SKEW 1s;")
	reads := []string{"LIST DOMAINS;", "DESCRIBE DOMAIN d;", "SHOW CLUSTER STATUS;", "ATTACH DOMAIN CLOCK;"}
	for _, tt := range []struct {
		name string
		in   *runtime.Interruption
	}{
		{"vouching", nil},
		{"interrupted", &runtime.Interruption{Cause: "node n3 has not heard from the cluster's leader"}},
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
