package lifecycle

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func restoreCmd(domains ...RestoredDomain) Command {
	return Command{Op: OpRestore, Restore: &Restore{Domains: domains}}
}

// archivedPaced is a paced domain archived running at generation 4 with
// authority revision 9.
func archivedPaced(name string, resume bool, auth *Identity) RestoredDomain {
	return RestoredDomain{Name: name, Pace: Paced, Period: uint64(sec), Skew: 100_000_000, Placement: PreferColocation,
		Generation: 4, LastStart: point(StartAt, utc0-3600*sec, utc0, 60), Running: true, Resume: resume,
		Authority: auth, AuthorityRevision: 9}
}

func archivedUnpaced(name string, running, resume bool) RestoredDomain {
	return RestoredDomain{Name: name, Pace: Unpaced, Generation: 2, LastStart: point(StartNow, utc0, utc0, 1), Running: running, Resume: resume}
}

// restoreCommands are valid restore commands at the edges, for the command
// round trip and the fuzz seeds.
func restoreCommands() []Command {
	return []Command{
		restoreCmd(archivedPaced("p", true, &nodeA), archivedUnpaced("u", true, true), RestoredDomain{Name: "fresh", Pace: Unpaced}),
		restoreCmd(archivedPaced("p", false, nil)),
		restoreCmd(RestoredDomain{Name: "edge", Pace: Paced, Period: math.MaxUint64, Skew: math.MaxUint64, Placement: SuggestSeparation,
			Generation: math.MaxUint64, LastStart: point(StartAt, math.MinInt64, math.MaxInt64, 5e-324), AuthorityRevision: math.MaxUint64}),
	}
}

func TestRestoreApply(t *testing.T) {
	pacedMapping := point(StartAt, utc0-3600*sec, utc0, 60).Mapping()
	tests := []struct {
		name  string
		cmd   Command
		check func(t *testing.T, s *State)
		err   error
	}{
		{"default restore of a running paced domain is stopped and keeps its generation",
			restoreCmd(archivedPaced("p", false, nil)), func(t *testing.T, s *State) {
				d, ok := s.Domain("p")
				require.True(t, ok)
				require.Equal(t, Stopped, d.Status)
				require.Equal(t, uint64(4), d.Generation)
				require.Nil(t, d.Mapping)
				require.Equal(t, AuthorityFence{Revision: 9}, d.Authority)
				require.Equal(t, PreferColocation, d.Placement)
				// A later START makes generation + 1.
				mustApply(t, s, startCmd("p", point(StartNow, utc0, utc0, 1), &nodeB))
				d, _ = s.Domain("p")
				require.Equal(t, uint64(5), d.Generation)
				require.Equal(t, AuthorityFence{Node: nodeB.Node, Incarnation: nodeB.Incarnation, Revision: 10}, d.Authority)
			}, nil},
		{"resume keeps the generation, start point and mapping with the new authority",
			restoreCmd(archivedPaced("p", true, &nodeB)), func(t *testing.T, s *State) {
				d, _ := s.Domain("p")
				require.Equal(t, Running, d.Status)
				require.Equal(t, uint64(4), d.Generation)
				require.Equal(t, point(StartAt, utc0-3600*sec, utc0, 60), d.LastStart)
				require.Equal(t, &pacedMapping, d.Mapping)
				require.Equal(t, AuthorityFence{Node: "node-b", Incarnation: 22, Revision: 10}, d.Authority)
			}, nil},
		{"resume of an unpaced running domain runs without a mapping",
			restoreCmd(archivedUnpaced("u", true, true)), func(t *testing.T, s *State) {
				d, _ := s.Domain("u")
				require.Equal(t, Running, d.Status)
				require.Equal(t, uint64(2), d.Generation)
				require.Nil(t, d.Mapping)
				require.Equal(t, AuthorityFence{}, d.Authority)
			}, nil},
		{"resume of a stopped domain stays stopped",
			restoreCmd(archivedUnpaced("u", false, true)), func(t *testing.T, s *State) {
				d, _ := s.Domain("u")
				require.Equal(t, Stopped, d.Status)
				require.Equal(t, uint64(2), d.Generation)
			}, nil},
		{"a never-started domain", restoreCmd(RestoredDomain{Name: "n", Pace: Paced, Period: 1}), func(t *testing.T, s *State) {
			d, _ := s.Domain("n")
			require.Equal(t, uint64(0), d.Generation)
			require.Equal(t, uint64(1), d.Period, "the smallest period is restored")
		}, nil},
		{"one existing name refuses every domain", restoreCmd(archivedUnpaced("new", false, false), archivedUnpaced("web", false, false)), nil, ErrDomainExists},
		{"paced resume without an authority", restoreCmd(archivedPaced("p", true, nil)), nil, ErrNoLiveVoter},
		{"paced resume with an unregistered incarnation", restoreCmd(archivedPaced("p", true, &Identity{Node: "node-a", Incarnation: 99})), nil, ErrUnknownNode},
		{"authority on a default restore", restoreCmd(archivedPaced("p", false, &nodeA)), nil, ErrInvalidCommand},
		{"authority on an unpaced resume", restoreCmd(RestoredDomain{Name: "u", Pace: Unpaced, Generation: 1, LastStart: point(StartNow, 0, 0, 1), Running: true, Resume: true, Authority: &nodeA}), nil, ErrInvalidCommand},
		{"paced with period 0", restoreCmd(RestoredDomain{Name: "z", Pace: Paced}), nil, ErrInvalidPeriod},
		{"unpaced with a skew", restoreCmd(RestoredDomain{Name: "z", Pace: Unpaced, Skew: 1}), nil, ErrInvalidPeriod},
		{"unpaced with an authority revision", restoreCmd(RestoredDomain{Name: "z", Pace: Unpaced, AuthorityRevision: 1}), nil, ErrInvalidCommand},
		{"exhausted authority revision", restoreCmd(func() RestoredDomain {
			d := archivedPaced("p", true, &nodeA)
			d.AuthorityRevision = math.MaxUint64
			return d
		}()), nil, ErrInvalidCommand},
		{"just inside the authority revision", restoreCmd(func() RestoredDomain {
			d := archivedPaced("p", true, &nodeA)
			d.AuthorityRevision = math.MaxUint64 - 1
			return d
		}()), func(t *testing.T, s *State) {
			d, _ := s.Domain("p")
			require.Equal(t, uint64(math.MaxUint64), d.Authority.Revision)
		}, nil},
		{"duplicate names", restoreCmd(archivedUnpaced("a", false, false), archivedUnpaced("a", false, false)), nil, ErrInvalidCommand},
		{"no domain", restoreCmd(), nil, ErrInvalidCommand},
		{"pace out of range", restoreCmd(RestoredDomain{Name: "z", Pace: Paced + 1}), nil, ErrInvalidCommand},
		{"placement out of range", restoreCmd(RestoredDomain{Name: "z", Pace: Unpaced, Placement: SuggestSeparation + 1}), nil, ErrInvalidCommand},
		{"authority without a node name", restoreCmd(archivedPaced("p", true, &Identity{Incarnation: 11})), nil, ErrInvalidCommand},
		{"an invalid domain after one with an authority", restoreCmd(archivedPaced("p", true, &nodeA),
			RestoredDomain{Name: "z", Pace: Unpaced, Running: true}), nil, ErrInvalidCommand},
		{"running without a generation", restoreCmd(RestoredDomain{Name: "a", Pace: Unpaced, Running: true}), nil, ErrInvalidCommand},
		{"start point without a generation", restoreCmd(RestoredDomain{Name: "a", Pace: Unpaced, LastStart: point(StartNow, 1, 1, 1)}), nil, ErrInvalidCommand},
		{"invalid rate", restoreCmd(RestoredDomain{Name: "a", Pace: Unpaced, Generation: 1, LastStart: point(StartNow, 1, 1, math.Inf(1))}), nil, ErrInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseState(t)
			before, err := s.MarshalSnapshot()
			require.NoError(t, err)
			r := s.Apply(tc.cmd)
			if tc.err != nil {
				require.ErrorIs(t, r.Err(), tc.err)
				require.False(t, r.Changed)
				after, err := s.MarshalSnapshot()
				require.NoError(t, err)
				require.Equal(t, before, after, "a refused restore changes nothing")
				return
			}
			require.NoError(t, r.Err())
			require.True(t, r.Changed)
			require.Equal(t, s.Revision(), r.Revision)
			for _, rd := range tc.cmd.Restore.Domains {
				d, ok := s.Domain(rd.Name)
				require.True(t, ok)
				require.Equal(t, r.Revision, d.Revision, "every restored domain is stamped with the one revision")
			}
			// The restored state keeps every invariant a snapshot checks.
			snap, err := s.MarshalSnapshot()
			require.NoError(t, err)
			_, err = RestoreSnapshot(snap)
			require.NoError(t, err)
			tc.check(t, s)
		})
	}
}

func TestRestoreErrorMessage(t *testing.T) {
	s := baseState(t)
	r := s.Apply(restoreCmd(archivedUnpaced("web", false, false)))
	require.EqualError(t, r.Err(), "domain 'web' already exists; nothing was restored: restore it under a free name with AS <new_name>, or DROP the existing domain first")
}

func TestRestoreCommandRoundTrip(t *testing.T) {
	for _, c := range restoreCommands() {
		b, err := EncodeCommand(c)
		require.NoError(t, err)
		back, err := DecodeCommand(b)
		require.NoError(t, err)
		require.Equal(t, c, back)
	}
}
