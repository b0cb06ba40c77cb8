package catalog

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/lifecycle"
)

func change(rev uint64, restored bool) Change {
	return Change{Revision: rev, State: lifecycle.NewState(), Restored: restored}
}

func TestSubscriptionCoalesces(t *testing.T) {
	var hooked []uint64
	f := newChangeFeed(func(c Change) { hooked = append(hooked, c.Revision) }, change(0, false))
	s := f.subscribe()
	require.Equal(t, uint64(0), (<-s.C()).Revision, "a new subscription starts from the current change")

	for rev := uint64(1); rev <= 100; rev++ {
		f.publish(change(rev, false))
	}
	require.Len(t, hooked, 100, "the hook sees every change")
	got := <-s.C()
	require.Equal(t, uint64(100), got.Revision)
	require.False(t, got.Restored)
	select {
	case c := <-s.C():
		t.Fatalf("unexpected second change %d", c.Revision)
	default:
	}

	late := f.subscribe()
	require.Equal(t, uint64(100), (<-late.C()).Revision)
	late.Close()
	late.Close()
	_, ok := <-late.C()
	require.False(t, ok)

	f.close()
	_, ok = <-s.C()
	require.False(t, ok)
	s.Close()
	after := f.subscribe()
	_, ok = <-after.C()
	require.False(t, ok, "subscribing to a closed feed gives a closed channel")
}

func TestSubscriptionKeepsRestoredThroughCoalescing(t *testing.T) {
	f := newChangeFeed(nil, change(0, false))
	s := f.subscribe()
	<-s.C()
	f.publish(change(5, true))
	f.publish(change(6, false))
	got := <-s.C()
	require.Equal(t, uint64(6), got.Revision)
	require.True(t, got.Restored, "a coalesced restore is still reported")

	f.publish(change(7, false))
	require.False(t, (<-s.C()).Restored)
}

func TestSubscriptionConcurrentReaders(t *testing.T) {
	f := newChangeFeed(nil, change(0, false))
	var wg sync.WaitGroup
	for range 8 {
		s := f.subscribe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for c := range s.C() {
				assert.GreaterOrEqual(t, c.Revision, last, "revisions never go back")
				last = c.Revision
			}
		}()
	}
	for rev := uint64(1); rev <= 1000; rev++ {
		f.publish(change(rev, false))
	}
	f.close()
	wg.Wait()
}

// A filtered subscription is offered only the changes it wants, and every
// restore; the others leave its channel as it was, so they wake nobody.
func TestSubscriptionWhenOffersOnlyWantedChanges(t *testing.T) {
	f := newChangeFeed(nil, change(0, false))
	even := f.subscribeWhen(func(c Change) bool { return c.Revision%2 == 0 })
	defer even.Close()
	require.Equal(t, uint64(0), (<-even.C()).Revision, "it starts from the current change")
	for _, tc := range []struct {
		publish []Change
		want    []uint64 // what the channel holds after each publish, 0 for nothing
	}{
		{publish: []Change{change(1, false)}, want: []uint64{0}},
		{publish: []Change{change(2, false)}, want: []uint64{2}},
		{publish: []Change{change(3, true)}, want: []uint64{3}},
		{publish: []Change{change(4, false), change(5, false)}, want: []uint64{4}},
	} {
		for _, c := range tc.publish {
			f.publish(c)
		}
		for _, rev := range tc.want {
			select {
			case c := <-even.C():
				require.Equal(t, rev, c.Revision)
			default:
				require.Zero(t, rev, "nothing offered where revision %d was wanted", rev)
			}
		}
	}
}
