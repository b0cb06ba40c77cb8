package node

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/planner"
)

// leaseRig drives an authorityLease on a fake clock with a fake catalog:
// the test sets the contact, the barrier's answer and the installed
// revision, and steps the clock one sample at a time, each step waiting for
// the lease's loop to have taken the previous sample (its timer re-armed).
type leaseRig struct {
	t     *testing.T
	src   *timesource.Fake
	l     *authorityLease
	steps uint64

	mu          sync.Mutex
	contact     catalog.Contact
	barrierRev  uint64
	barrierErr  error
	barriers    int
	installed   uint64
	interrupted []*clockrt.Interruption // every setInterrupted call
}

var errNoLeader = errors.New("no leader")

func newLeaseRig(t *testing.T, lease time.Duration) *leaseRig {
	r := &leaseRig{t: t, src: timesource.NewFake(0), barrierErr: errNoLeader}
	r.l = newAuthorityLease(r.src, slog.New(slog.NewTextHandler(io.Discard, nil)), "n3", lease, leaseDeps{
		contact: func() catalog.Contact {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.contact
		},
		barrier: func(context.Context) (uint64, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.barriers++
			return r.barrierRev, r.barrierErr
		},
		waitInstalled: func(_ context.Context, rev uint64) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.installed < rev {
				return errors.New("not installed yet")
			}
			return nil
		},
		setInterrupted: func(in *clockrt.Interruption) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.interrupted = append(r.interrupted, in)
		},
	})
	t.Cleanup(r.l.stop)
	return r
}

// step advances the clock by one sample period once the loop has armed its
// timer, and waits until it has taken the sample.
func (r *leaseRig) step() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The loop's sample timer falls due one period from now; the catch-up
	// arms a timeout of its own, a lease long, so the deadline tells them
	// apart.
	require.NoError(r.t, r.src.BlockUntilDue(ctx, r.l.poll))
	r.src.Advance(r.l.poll)
	r.steps++
	require.NoError(r.t, r.src.BlockUntilDue(ctx, r.l.poll))
}

func (r *leaseRig) set(f func(r *leaseRig)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

func (r *leaseRig) calls() []*clockrt.Interruption {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*clockrt.Interruption(nil), r.interrupted...)
}

func TestAuthorityLeaseBound(t *testing.T) {
	const lease = 800 * time.Millisecond
	tests := []struct {
		name    string
		elapsed time.Duration
		vouches bool
	}{
		{"just inside the lease", lease - time.Nanosecond, true},
		{"at the lease", lease, true},
		{"just outside the lease", lease + time.Nanosecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newLeaseRig(t, lease)
			require.Equal(t, lease/catalog.ContactPolls, r.l.poll)
			// No contact at all: the lease runs from its start. vouches
			// reads the clock itself, between the loop's samples.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, r.src.BlockUntil(ctx, 1))
			r.src.Advance(tt.elapsed)
			require.Equal(t, tt.vouches, r.l.vouches())
		})
	}
}

func TestAuthorityLeaseLapsesAndCatchesUp(t *testing.T) {
	const lease = 800 * time.Millisecond
	r := newLeaseRig(t, lease)
	// A contact every sample keeps it for many leases.
	for i := 0; i < 3*catalog.ContactPolls; i++ {
		r.set(func(r *leaseRig) { r.contact.Token++ })
		r.step()
		require.True(t, r.l.vouches(), "sample %d", i)
	}
	require.Empty(t, r.calls())
	// Silence: the lease, renewed from the sample before the last contact
	// was seen, holds for its length from then, and the loop's next
	// sample interrupts the node's clocks.
	for i := 0; i < catalog.ContactPolls-1; i++ {
		r.step()
		require.True(t, r.l.vouches(), "silent sample %d", i)
	}
	require.Empty(t, r.calls(), "within the lease nothing is interrupted")
	r.step()
	require.False(t, r.l.vouches())
	calls := r.calls()
	require.Len(t, calls, 1)
	require.NotNil(t, calls[0])
	require.Contains(t, calls[0].Cause, "authority lease of 800ms")
	require.Contains(t, calls[0].Cause, "n3")

	// Contact again, but no barrier commits: still interrupted.
	r.set(func(r *leaseRig) { r.contact.Token++ })
	r.step()
	require.False(t, r.l.vouches(), "contact alone does not end the interruption")
	// The barrier commits at revision 7, not yet installed here.
	r.set(func(r *leaseRig) { r.barrierRev, r.barrierErr, r.installed = 7, nil, 6; r.contact.Token++ })
	r.step()
	require.False(t, r.l.vouches(), "a node that has not installed the barrier's revision does not vouch")
	require.Len(t, r.calls(), 1)
	// Installed: the next sample ends the interruption.
	r.set(func(r *leaseRig) { r.installed = 7; r.contact.Token++ })
	r.step()
	require.True(t, r.l.vouches())
	calls = r.calls()
	require.Len(t, calls, 2)
	require.Nil(t, calls[1])
}

func TestAuthorityLeaseLeaderRenews(t *testing.T) {
	const lease = 800 * time.Millisecond
	r := newLeaseRig(t, lease)
	r.set(func(r *leaseRig) { r.contact.Leader = true })
	for i := 0; i < 3*catalog.ContactPolls; i++ {
		r.step()
		require.True(t, r.l.vouches(), "sample %d", i)
	}
	// Stepping down with no contact from a new leader lapses it.
	r.set(func(r *leaseRig) { r.contact.Leader = false })
	for i := 0; i < catalog.ContactPolls; i++ {
		r.step()
	}
	require.False(t, r.l.vouches())
	require.Len(t, r.calls(), 1)
}

func TestNoLeaseAlwaysVouches(t *testing.T) {
	l := newAuthorityLease(timesource.NewFake(0), slog.New(slog.NewTextHandler(io.Discard, nil)), "local", 0, leaseDeps{})
	defer l.stop()
	require.True(t, l.vouches())
}

// TestWithheldTickHandedOnWhenTheLeaseVouchesAgain: a tick that falls due
// while the lease does not vouch is withheld, and handed on, locally and to
// delivery, as soon as a sample finds the lease vouching again, not at the
// domain's next boundary. A tick of a producer retired meanwhile is not.
func TestWithheldTickHandedOnWhenTheLeaseVouchesAgain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stopped bool
	}{
		{"the producer still runs", false},
		{"the producer was retired meanwhile", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := timesource.NewFake(t0)
			var log reportLog
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			n, err := Open(ctx, Config{Logger: quietLogger(), RaftLogLevel: slog.LevelError, TimeSource: fake, OnProgress: log.add})
			require.NoError(t, err)
			defer func() { require.NoError(t, n.Close()) }()

			// The embedded node's lease (none) is replaced by a member's,
			// wired as in production but with a contact the test decides,
			// before any producer runs.
			const lease = 400 * time.Millisecond
			var leader atomic.Bool
			leader.Store(true)
			deps := n.leaseDeps(n.catalog)
			deps.contact = func() catalog.Contact { return catalog.Contact{Leader: leader.Load()} }
			n.lease.stop()
			n.lease = newAuthorityLease(n.src, quietLogger(), n.cfg.Name, lease, deps)
			poll := n.lease.poll

			_, err = n.CreateDomain(ctx, paced("prod", time.Second, 0))
			require.NoError(t, err)
			_, err = n.Start(ctx, "prod", planner.Start{Mode: planner.StartAtNow, Rate: 1}.Request())
			require.NoError(t, err)
			waitTick(t, n, "prod", 1)

			// Cut from the leader; the next boundary falls due a period
			// later, by when the lease has long lapsed.
			leader.Store(false)
			require.NoError(t, fake.BlockUntilDue(ctx, poll), "the lease's sample timer")
			require.NoError(t, fake.BlockUntilDue(ctx, time.Second), "the producer's timer for tick 2")
			fake.Advance(time.Second)
			require.Eventually(t, func() bool {
				n.withheld.mu.Lock()
				defer n.withheld.mu.Unlock()
				return n.withheld.m["prod"].rep.ID == 2
			}, 10*time.Second, time.Millisecond, "tick 2 is withheld")
			require.Equal(t, uint64(1), n.registry.Progress("prod").ID, "a withheld tick is not applied")
			if tc.stopped {
				_, err = n.Stop(ctx, "prod")
				require.NoError(t, err)
			}
			reported := len(log.all())

			// Contact again: the next sample renews the lease, catches up
			// and vouches, with the clock still short of the boundary after.
			leader.Store(true)
			require.NoError(t, fake.BlockUntilDue(ctx, poll))
			fake.Advance(poll)
			require.Eventually(t, n.Vouches, 10*time.Second, time.Millisecond, "the lease vouches again")
			if tc.stopped {
				// One more sample, after the one that vouched: nothing.
				require.NoError(t, fake.BlockUntilDue(ctx, poll))
				fake.Advance(poll)
				require.NoError(t, fake.BlockUntilDue(ctx, poll))
				require.Len(t, log.all(), reported, "a retired producer's withheld tick is not handed on")
				require.Zero(t, n.withheld.count.Load())
				return
			}
			waitTick(t, n, "prod", 2)
			reps := log.all()
			require.Equal(t, uint64(2), reps[len(reps)-1].ID, "the withheld tick was handed on")
			require.Zero(t, n.withheld.count.Load())
		})
	}
}
