package clockrt

import (
	"math"
	"testing"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/stretchr/testify/require"
)

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{
		StateMissing: "missing", StateStopped: "stopped", StateUninstalled: "uninstalled",
		StateUnpaced: "unpaced", StatePaced: "paced", State(9): "State(9)",
	} {
		require.Equal(t, want, s.String())
		require.Equal(t, s == StateUnpaced || s == StatePaced, s.Readable())
	}
}

func TestInstallValidation(t *testing.T) {
	noAuthority := paced(1, 1, 0)
	noAuthority.Authority = lifecycle.AuthorityFence{Revision: 3}
	noPeriod := paced(1, 1, 0)
	noPeriod.Period = 0
	tests := []struct {
		name   string
		domain string
		lc     Lifecycle
		detail string // "" means valid
	}{
		{"stopped never started", "d", stopped(0, 0), ""},
		{"stopped", "d", stopped(3, 0), ""},
		{"unpaced", "d", unpaced(1, 0), ""},
		{"uninstalled", "d", uninstalled(1, 0), ""},
		{"paced", "d", paced(1, 60, 0), ""},
		{"paced smallest rate", "d", paced(1, 5e-324, 0), ""},
		{"paced largest rate", "d", paced(1, math.MaxFloat64, 0), ""},
		{"empty domain", "", unpaced(1, 0), "domain name is empty"},
		{"missing via install", "d", Lifecycle{State: StateMissing}, "missing state is installed by removing the domain"},
		{"unknown state", "d", Lifecycle{State: 42, Generation: 1}, "unknown state 42"},
		{"unpaced generation zero", "d", unpaced(0, 0), "unpaced state requires a nonzero generation"},
		{"uninstalled generation zero", "d", uninstalled(0, 0), "uninstalled state requires a nonzero generation"},
		{"paced generation zero", "d", paced(0, 1, 0), "paced state requires a nonzero generation"},
		{"paced zero rate", "d", paced(1, 0, 0), "invalid time rate"},
		{"paced negative rate", "d", paced(1, -1, 0), "invalid time rate"},
		{"paced NaN rate", "d", paced(1, math.NaN(), 0), "invalid time rate"},
		{"paced infinite rate", "d", paced(1, math.Inf(1), 0), "invalid time rate"},
		{"paced zero period", "d", noPeriod, "nonzero period"},
		{"paced unassigned authority", "d", noAuthority, "install an unassigned authority as uninstalled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newFakeRegistry(t)
			published, err := r.Install(tt.domain, tt.lc)
			if tt.detail == "" {
				require.NoError(t, err)
				require.True(t, published)
				require.Equal(t, tt.lc.State, r.Current(tt.domain).State())
				return
			}
			ce := requireClockErr(t, err, ErrInvalidLifecycle, tt.domain)
			require.Contains(t, ce.Error(), tt.detail)
			require.False(t, published)
			_, ok := r.Lookup(tt.domain)
			require.False(t, ok, "a refused install creates no allocation")
		})
	}
}

// TestInstallTransitions walks every state pair: whether the replacement is
// published, whether it wakes the replaced installation's waiters, and
// whether it shares the read watermark.
func TestInstallTransitions(t *testing.T) {
	moved := paced(1, 60, 0)
	moved.Authority = fenceB
	remapped := paced(1, 2, 0)
	tests := []struct {
		name      string
		from, to  Lifecycle
		published bool
		shared    bool // the replacement shares the predecessor's watermark
	}{
		{"paced unchanged", paced(1, 60, 1), paced(1, 60, 1), false, true},
		{"paced unchanged newer revision", paced(1, 60, 1), paced(1, 60, 2), false, true},
		{"authority move keeps generation", paced(1, 60, 0), moved, true, true},
		{"same generation remapped", paced(1, 60, 0), remapped, true, true},
		{"paced to unpaced same generation", paced(1, 60, 0), unpaced(1, 0), true, true},
		{"unpaced unchanged", unpaced(1, 0), unpaced(1, 0), false, true},
		{"unpaced start point changes", unpaced(1, 0), Lifecycle{State: StateUnpaced, Generation: 1, StartPoint: 5}, true, true},
		{"paced new generation", paced(1, 60, 0), paced(2, 60, 0), true, false},
		{"unpaced new generation", unpaced(1, 0), unpaced(2, 0), true, false},
		{"paced to uninstalled", paced(1, 60, 0), uninstalled(1, 0), true, false},
		{"uninstalled to paced same generation", uninstalled(1, 0), paced(1, 60, 0), true, false},
		{"uninstalled unchanged", uninstalled(1, 0), uninstalled(1, 0), false, false},
		{"paced to stopped", paced(1, 60, 0), stopped(1, 0), true, false},
		{"stopped to paced", stopped(1, 0), paced(2, 60, 0), true, false},
		{"stopped to paced same generation", stopped(1, 0), paced(1, 60, 0), true, false},
		{"stopped unchanged", stopped(1, 0), stopped(1, 0), false, false},
		{"unpaced to stopped", unpaced(1, 0), stopped(1, 0), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newFakeRegistry(t)
			install(t, r, "d", tt.from)
			a, ok := r.Lookup("d")
			require.True(t, ok)
			prev, replaced := a.Watch()
			published, err := r.Install("d", tt.to)
			require.NoError(t, err)
			require.Equal(t, tt.published, published)
			require.Equal(t, tt.published, closed(replaced), "waiters wake exactly when a replacement is published")
			cur := a.Load()
			if !tt.published {
				require.Same(t, prev, cur)
				return
			}
			require.Equal(t, tt.to.normalized(), cur.Lifecycle())
			if tt.shared {
				require.Same(t, prev.clock, cur.clock)
			} else if tt.to.State.Readable() {
				require.NotNil(t, cur.clock)
				require.NotSame(t, prev.clock, cur.clock)
			} else {
				require.Nil(t, cur.clock)
			}
		})
	}
}

func TestInstallationAccessors(t *testing.T) {
	r, _ := newFakeRegistry(t)
	lc := paced(4, 60, 9)
	install(t, r, "prod", lc)
	in := r.Current("prod")
	require.Equal(t, "prod", in.Domain())
	require.Equal(t, StatePaced, in.State())
	require.Equal(t, uint64(4), in.Generation())
	require.Equal(t, lc.StartPoint, in.StartPoint())
	m, ok := in.Mapping()
	require.True(t, ok)
	require.Equal(t, lc.Mapping, m)
	require.Equal(t, lc.Period, in.Period())
	require.Equal(t, lc.Skew, in.Skew())
	require.Equal(t, fenceA, in.Authority())
	require.Equal(t, uint64(9), in.Revision())
	_, ok = in.Watermark()
	require.False(t, ok, "no read yet")

	// Non-paced states carry no paced fields, whatever the request held.
	noisy := unpaced(5, 10)
	noisy.Mapping = clock.Mapping{Rate: 3}
	noisy.Period, noisy.Skew, noisy.Authority = 1, 2, fenceB
	install(t, r, "prod", noisy)
	in = r.Current("prod")
	_, ok = in.Mapping()
	require.False(t, ok)
	require.Zero(t, in.Period())
	require.Zero(t, in.Skew())
	require.False(t, in.Authority().Assigned())
	require.Equal(t, unpaced(5, 10), in.Lifecycle())
}

func TestInstallRevisionOrder(t *testing.T) {
	r, _ := newFakeRegistry(t)
	install(t, r, "d", paced(1, 1, 5))
	moved := paced(1, 1, 4)
	moved.Authority = fenceB
	_, err := r.Install("d", moved)
	requireClockErr(t, err, ErrOlderRevision, "d")
	require.Equal(t, fenceA, r.Current("d").Authority(), "an older revision never restores a superseded fence")

	// A newer revision that changes nothing publishes nothing but is
	// recorded, so the revision between them is now older.
	published, err := r.Install("d", paced(1, 1, 8))
	require.NoError(t, err)
	require.False(t, published)
	require.Equal(t, uint64(5), r.Current("d").Revision())
	moved.Revision = 7
	_, err = r.Install("d", moved)
	requireClockErr(t, err, ErrOlderRevision, "d")
	moved.Revision = 8
	published, err = r.Install("d", moved)
	require.NoError(t, err)
	require.True(t, published, "the same revision may still be applied")
}

func TestRemove(t *testing.T) {
	r, _ := newFakeRegistry(t)
	require.False(t, r.Remove("d"))
	install(t, r, "d", paced(3, 60, 2))
	install(t, r, "e", unpaced(1, 2))
	require.Equal(t, []string{"d", "e"}, r.Domains())
	h, err := r.Bind("d")
	require.NoError(t, err)
	a := h.Allocation()
	in, replaced := a.Watch()
	require.Equal(t, StatePaced, in.State())

	require.True(t, r.Remove("d"))
	require.True(t, closed(replaced), "removal publishes missing and wakes waiters")
	gone := a.Load()
	require.Equal(t, StateMissing, gone.State())
	require.Zero(t, gone.Generation())
	require.False(t, closed(gone.Replaced()))
	_, ok := r.Lookup("d")
	require.False(t, ok)
	require.Equal(t, []string{"e"}, r.Domains())
	_, err = h.Now()
	requireClockErr(t, err, ErrDomainMissing, "d")

	// A re-created domain is a new allocation; the old handle stays missing.
	install(t, r, "d", paced(3, 60, 0))
	_, err = h.Now()
	requireClockErr(t, err, ErrDomainMissing, "d")
	require.Equal(t, StateMissing, a.Load().State())
	require.Equal(t, StateMissing, r.Current("nope").State())
}

func TestBind(t *testing.T) {
	tests := []struct {
		name string
		lc   *Lifecycle // nil: never installed
		err  error
	}{
		{"missing", nil, ErrDomainMissing},
		{"stopped", &Lifecycle{State: StateStopped, Generation: 2}, ErrDomainStopped},
		{"uninstalled", &Lifecycle{State: StateUninstalled, Generation: 2}, ErrClockUninstalled},
		{"unpaced", &Lifecycle{State: StateUnpaced, Generation: 2}, nil},
		{"paced", func() *Lifecycle { lc := paced(2, 60, 0); return &lc }(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newFakeRegistry(t)
			if tt.lc != nil {
				install(t, r, "prod", *tt.lc)
			}
			h, err := r.Bind("prod")
			if tt.err != nil {
				requireClockErr(t, err, tt.err, "prod")
				require.ErrorIs(t, err, ErrClockUnavailable)
				require.Nil(t, h)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "prod", h.Domain())
			require.Equal(t, uint64(2), h.Generation())
		})
	}
}

func TestClockErrorMessages(t *testing.T) {
	tests := []struct {
		err  *ClockError
		want string
	}{
		{&ClockError{Op: "bind", Domain: "prod", Err: ErrDomainMissing},
			`bind domain "prod": domain is not installed on this node; check the name or create the domain`},
		{&ClockError{Op: "read", Domain: "prod", Generation: 3, Err: ErrDomainStopped},
			`read domain "prod" generation 3: domain is stopped; START it before using its clock`},
		{&ClockError{Op: "install", Domain: "x", Err: ErrInvalidLifecycle, Detail: "why"},
			`install domain "x": invalid lifecycle installation: why`},
		{&ClockError{Op: "physical wait", Err: ErrWaitCancelled, Cause: errCause},
			`physical wait: wait for the deadline was cancelled: cause`},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.err.Error())
	}
	unavailable := []error{ErrDomainMissing, ErrDomainStopped, ErrClockUninstalled, ErrStaleGeneration, ErrForeignDeadline}
	for _, s := range []error{ErrDomainMissing, ErrDomainStopped, ErrClockUninstalled, ErrStaleGeneration,
		ErrForeignDeadline, ErrWaitCancelled, ErrCannotSchedule, ErrClockOverflow, ErrTickOverflow, ErrInvalidLifecycle, ErrOlderRevision} {
		err := &ClockError{Op: "read", Domain: "d", Err: s}
		require.ErrorIs(t, err, s)
		require.Equal(t, contains(unavailable, s), errorsIs(err, ErrClockUnavailable), "%v", s)
	}
}

// TestReserveOnlyPreparesAnEmptyRegistry reserves room in an empty registry
// and in one that holds a domain: the installed domain stays installed.
func TestReserveOnlyPreparesAnEmptyRegistry(t *testing.T) {
	r, _ := newFakeRegistry(t)
	r.Reserve(10)
	_, err := r.Install("a", Lifecycle{State: StateStopped, Revision: 1})
	require.NoError(t, err)
	r.Reserve(10)
	require.Equal(t, []string{"a"}, r.Domains())
	r.Reserve(0)
	require.Equal(t, []string{"a"}, r.Domains())
}
