package clockrt

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

// report returns a report matching paced(gen, …)'s fence (fenceA).
func report(gen, id uint64, utc int64) ProgressReport {
	return ProgressReport{
		Domain: "d", Generation: gen, Authority: fenceA,
		ID: id, Boundary: base - 10*second + int64(id-1)*second, AuthorityUTC: utc, Period: uint64(second),
	}
}

// A refused report is a *ClockError that keeps the context it was
// refused in: the operation, the domain, the report's generation, the
// sentinel and what the installed fence holds instead.
func TestAcceptProgressRefusals(t *testing.T) {
	ok := report(1, 1, base)
	cases := []struct {
		name    string
		install func(r *Registry)
		from    string
		rep     func(ProgressReport) ProgressReport
		want    error
		says    string // the full report, when it is checked
	}{
		{name: "accepted", from: "a"},
		{name: "missing domain", install: func(*Registry) {}, from: "a", want: ErrDomainMissing,
			says: `progress domain "d" generation 1: ` + ErrDomainMissing.Error()},
		{name: "removed domain", install: func(r *Registry) { install(t, r, "d", paced(1, 1, 1)); r.Remove("d") }, from: "a", want: ErrDomainMissing},
		{name: "stopped", install: func(r *Registry) { install(t, r, "d", stopped(1, 1)) }, from: "a", want: ErrDomainStopped,
			says: `progress domain "d" generation 1: ` + ErrDomainStopped.Error()},
		{name: "uninstalled", install: func(r *Registry) { install(t, r, "d", uninstalled(1, 1)) }, from: "a", want: ErrProgressFence,
			says: `progress domain "d" generation 1: ` + ErrProgressFence.Error() + ": the domain is uninstalled here and has no installed authority"},
		{name: "unpaced", install: func(r *Registry) { install(t, r, "d", unpaced(1, 1)) }, from: "a", want: ErrProgressFence},
		{name: "tick zero", from: "a", rep: func(p ProgressReport) ProgressReport { p.ID = 0; return p }, want: ErrInvalidProgress,
			says: `progress domain "d" generation 1: ` + ErrInvalidProgress.Error() + `: tick id 0 from node "a"`},
		{name: "older generation", from: "a", rep: func(p ProgressReport) ProgressReport { p.Generation = 0; return p }, want: ErrProgressFence,
			says: `progress domain "d": ` + ErrProgressFence.Error() + ": installed generation is 1"},
		{name: "newer generation", from: "a", rep: func(p ProgressReport) ProgressReport { p.Generation = 2; return p }, want: ErrProgressFence,
			says: `progress domain "d" generation 2: ` + ErrProgressFence.Error() + ": installed generation is 1"},
		{name: "older revision", from: "a", rep: func(p ProgressReport) ProgressReport { p.Authority.Revision = 0; return p }, want: ErrProgressFence,
			says: `progress domain "d" generation 1: ` + ErrProgressFence.Error() + ": authority revision 0, installed revision is 1"},
		{name: "newer revision", from: "a", rep: func(p ProgressReport) ProgressReport { p.Authority.Revision = 2; return p }, want: ErrProgressFence},
		{name: "previous incarnation", from: "a", rep: func(p ProgressReport) ProgressReport { p.Authority.Incarnation = 0; return p }, want: ErrProgressFence,
			says: `progress domain "d" generation 1: ` + ErrProgressFence.Error() + ": authority " + lifecycle.AuthorityFence{Node: "a"}.Identity().String() +
				", installed authority is " + fenceA.Identity().String()},
		{name: "next incarnation", from: "a", rep: func(p ProgressReport) ProgressReport { p.Authority.Incarnation = 2; return p }, want: ErrProgressFence},
		{name: "other node in report", from: "a", rep: func(p ProgressReport) ProgressReport { p.Authority.Node = "b"; return p }, want: ErrProgressFence},
		{name: "authenticated node differs", from: "b", want: ErrProgressFence,
			says: `progress domain "d" generation 1: ` + ErrProgressFence.Error() + `: reported by node "b", installed authority is ` + fenceA.Identity().String()},
		{name: "empty authenticated node", from: "", want: ErrProgressFence},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			if tc.install != nil {
				tc.install(r)
			} else {
				install(t, r, "d", paced(1, 1, 1))
			}
			rep := ok
			if tc.rep != nil {
				rep = tc.rep(rep)
			}
			accepted, err := r.AcceptProgress(tc.from, rep)
			if tc.want == nil {
				require.NoError(t, err)
				require.True(t, accepted)
				require.Equal(t, rep.Tick(), r.Progress("d"))
				return
			}
			ce := requireClockErr(t, err, tc.want, "d")
			require.Equal(t, "progress", ce.Op)
			require.Equal(t, rep.Generation, ce.Generation)
			if tc.says != "" {
				require.Equal(t, tc.says, err.Error())
			}
			require.False(t, accepted)
			require.Equal(t, Tick{}, r.Progress("d"))
			_, missing := r.Lookup("d")
			require.Equal(t, tc.want != ErrDomainMissing, missing, "progress never creates a domain")
		})
	}
}

func TestAcceptProgressNewerOnly(t *testing.T) {
	cases := []struct {
		name string
		id   uint64
		utc  int64
		want bool
	}{
		{name: "duplicate", id: 5, utc: base, want: false},
		{name: "older id", id: 4, utc: base + 1, want: false},
		{name: "newer id, older utc", id: 6, utc: base - 1, want: false},
		{name: "newer id, same utc", id: 6, utc: base, want: true},
		{name: "newer id, newer utc", id: 6, utc: base + 1, want: true},
		{name: "skipping ids", id: 1000, utc: base + 1, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			install(t, r, "d", paced(1, 1, 1))
			first := report(1, 5, base)
			ok, err := r.AcceptProgress("a", first)
			require.NoError(t, err)
			require.True(t, ok)
			ok, err = r.AcceptProgress("a", report(1, tc.id, tc.utc))
			require.NoError(t, err, "an ignored report is not an error")
			require.Equal(t, tc.want, ok)
			want := first.Tick()
			if tc.want {
				want = report(1, tc.id, tc.utc).Tick()
			}
			require.Equal(t, want, r.Progress("d"))
		})
	}
}

// TestAcceptProgressBeforeTheClear holds the moment between an install of
// generation 2 and its clearing of generation 1's tick (Install stores the
// installation, then syncInstalled clears the watch under its lock): a
// report of generation 2 arriving then is compared only with ticks of its
// own generation, so its tick 1 is accepted although generation 1 reached 5.
func TestAcceptProgressBeforeTheClear(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	ok, err := r.AcceptProgress("a", report(1, 5, base))
	require.NoError(t, err)
	require.True(t, ok)
	a, found := r.Lookup("d")
	require.True(t, found)
	old := a.progress.load()
	install(t, r, "d", paced(2, 1, 1))
	require.Zero(t, r.Progress("d").ID, "the install cleared generation 1's tick")
	a.progress.mu.Lock()
	a.progress.tick = old // as it was before the clear ran
	a.progress.mu.Unlock()

	rep := report(2, 1, base)
	ok, err = r.AcceptProgress("a", rep)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, rep.Tick(), r.Progress("d"))
}

// TestProgressNeverChangesInstallation accepts a tick whose boundary lies
// ahead of the node's projection: the installation is not replaced, and
// reads stay the mapping's projection of this node's UTC, at the tick and
// one nanosecond after it, never the tick's boundary.
func TestProgressNeverChangesInstallation(t *testing.T) {
	r, f := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	before := r.Current("d")
	h, err := r.Bind("d")
	require.NoError(t, err)
	start, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, base-10*second, start)

	rep := report(1, 3, base)
	require.Greater(t, rep.Boundary, start, "the tick is ahead of this node's time")
	rep.Period = 7 // a receiver never takes the period from a report
	ok, err := r.AcceptProgress("a", rep)
	require.NoError(t, err)
	require.True(t, ok)
	require.Same(t, before, r.Current("d"))
	require.False(t, closed(before.Replaced()))

	for _, advance := range []int64{0, 1} {
		f.Advance(timeDuration(advance))
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, start+advance, got, "a read %d ns on projects the mapping, not the tick", advance)
	}
}

func TestProgressWatchClearing(t *testing.T) {
	moved := paced(1, 1, 2)
	moved.Authority = fenceB
	cases := []struct {
		name    string
		change  func(r *Registry)
		cleared bool
	}{
		{name: "new generation", change: func(r *Registry) { install(t, r, "d", paced(2, 1, 2)) }, cleared: true},
		{name: "stop", change: func(r *Registry) { install(t, r, "d", stopped(1, 2)) }, cleared: true},
		{name: "removal", change: func(r *Registry) { r.Remove("d") }, cleared: true},
		{name: "authority move keeps it", change: func(r *Registry) { install(t, r, "d", moved) }},
		{name: "authority revoked keeps it", change: func(r *Registry) { install(t, r, "d", uninstalled(1, 2)) }},
		{name: "equal installation keeps it", change: func(r *Registry) { install(t, r, "d", paced(1, 1, 2)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newAheadRegistry(t)
			install(t, r, "d", paced(1, 1, 1))
			_, err := r.AcceptProgress("a", report(1, 2, base))
			require.NoError(t, err)
			a, _ := r.Lookup("d")
			tick, _, wake := a.progress.subscribe()
			require.Equal(t, uint64(2), tick.ID)
			tc.change(r)
			require.Equal(t, tc.cleared, closed(wake), "a clear wakes the watch")
			got := a.progress.load()
			if tc.cleared {
				require.Equal(t, Tick{}, got)
			} else {
				require.Equal(t, uint64(2), got.ID)
			}
		})
	}
}

func TestProgressAfterGenerationChangeStartsOver(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	_, err := r.AcceptProgress("a", report(1, 50, base+5*second))
	require.NoError(t, err)
	install(t, r, "d", paced(2, 1, 2))
	rep := report(2, 1, base)
	rep.Authority.Revision = 1
	ok, err := r.AcceptProgress("a", rep)
	require.NoError(t, err)
	require.True(t, ok, "tick 1 of a new generation is newer than nothing, whatever the old UTC")
	require.Equal(t, rep.Tick(), r.Progress("d"))
}

func TestAcceptProgressConcurrentKeepsNewest(t *testing.T) {
	r, _ := newAheadRegistry(t)
	install(t, r, "d", paced(1, 1, 1))
	const writers, per = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id := uint64(i*writers + w + 1)
				_, err := r.AcceptProgress("a", report(1, id, base+int64(id)))
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// A watcher sees the tick id never decrease, woken by each change it
	// has not read yet, until it reads the newest.
	a, _ := r.Lookup("d")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	var seen []uint64
	go func() {
		defer close(done)
		for {
			tick, _, wake := a.progress.subscribe()
			seen = append(seen, tick.ID)
			if tick.ID == writers*per {
				return
			}
			select {
			case <-wake:
			case <-ctx.Done():
				t.Errorf("the watch was not woken after tick %d", tick.ID)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	require.Equal(t, uint64(writers*per), r.Progress("d").ID)
	for i := 1; i < len(seen); i++ {
		require.Greater(t, seen[i], seen[i-1])
	}
}

func TestAcceptProgressRacingInstall(t *testing.T) {
	// A report validated against generation 1 while generation 2 is being
	// installed either lands before the clear or is refused: the watch
	// never holds a tick of a generation that is not installed.
	for range 200 {
		r, _ := newAheadRegistry(t)
		install(t, r, "d", paced(1, 1, 1))
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = r.AcceptProgress("a", report(1, 1, base)) }()
		go func() { defer wg.Done(); install(t, r, "d", paced(2, 1, 2)) }()
		wg.Wait()
		require.Equal(t, Tick{}, r.Progress("d"))
	}
}

func TestProgressOfUnknownDomain(t *testing.T) {
	r, _ := newAheadRegistry(t)
	require.Equal(t, Tick{}, r.Progress("nope"))
	_, err := r.AcceptProgress("a", ProgressReport{Domain: "nope", ID: 1, Authority: lifecycle.AuthorityFence{Node: "a"}})
	requireClockErr(t, err, ErrDomainMissing, "nope")
	require.Empty(t, r.Domains(), "progress never creates a domain")
	require.Equal(t, StateMissing, r.Current("nope").State())
}
