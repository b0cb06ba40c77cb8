package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireSameState checks that two states hold the same catalog: the same
// revision, domains, nodes and snapshot bytes, and (the table's shape being
// canonical) deeply equal domain tables. Which parts of its table a state
// may write in place is not part of its value.
func requireSameState(t testing.TB, want, got *State, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, want.Revision(), got.Revision(), msgAndArgs...)
	require.Equal(t, want.Domains(), got.Domains(), msgAndArgs...)
	require.Equal(t, want.Nodes(), got.Nodes(), msgAndArgs...)
	require.Equal(t, want.count, got.count, msgAndArgs...)
	require.Equal(t, want.pacedRunning, got.pacedRunning, msgAndArgs...)
	require.Equal(t, want.domains, got.domains, msgAndArgs...)
	require.Equal(t, want.flat, got.flat, msgAndArgs...)
	wb, err := want.MarshalSnapshot()
	require.NoError(t, err)
	gb, err := got.MarshalSnapshot()
	require.NoError(t, err)
	require.Equal(t, string(wb), string(gb), msgAndArgs...)
}

// nearFlatLimit returns a state holding two domains fewer than a flat table
// can, so that randomCommand's creates and drops change the table's form
// back and forth.
func nearFlatLimit(t testing.TB) *State {
	s := NewState()
	for i := range flatMax - 2 {
		mustApply(t, s, createUnpaced(fmt.Sprintf("filler-%02d", i)))
	}
	return s
}

// TestClonesArePersistent applies random commands to one state, cloning it
// after every step, and checks at the end that every clone still holds
// exactly what the state held when it was taken, and that applying to old
// clones does not reach the state or other clones. It starts from an empty
// state, whose table stays flat, and from one whose table changes between
// flat and trie as domains come and go.
func TestClonesArePersistent(t *testing.T) {
	for _, start := range []struct {
		name  string
		state func(testing.TB) *State
		forms int // how many table forms the run must pass through
	}{{"empty", func(testing.TB) *State { return NewState() }, 1}, {"near-flat-limit", nearFlatLimit, 2}} {
		for seed := range uint64(5) {
			t.Run(fmt.Sprintf("%s/%d", start.name, seed), func(t *testing.T) {
				require.Equal(t, start.forms, clonesArePersistent(t, rand.New(rand.NewPCG(seed, 7)), start.state(t)))
			})
		}
	}
}

// clonesArePersistent is one run of TestClonesArePersistent; it returns
// how many table forms (flat, trie) the state passed through.
func clonesArePersistent(t *testing.T, rng *rand.Rand, s *State) int {
	type taken struct {
		clone *State
		snap  []byte
	}
	var history []taken
	forms := map[bool]bool{}
	for range 300 {
		s.Apply(randomCommand(rng, s))
		forms[s.domains == nil] = true
		if rng.IntN(3) == 0 {
			continue // several changes between clones, as in a batch
		}
		c := s.Clone()
		b, err := c.MarshalSnapshot()
		require.NoError(t, err)
		history = append(history, taken{c, b})
		// Writing to an old clone must not reach anyone else.
		if old := history[rng.IntN(len(history))]; rng.IntN(4) == 0 {
			old.clone.Apply(randomCommand(rng, old.clone))
			b, err := old.clone.MarshalSnapshot()
			require.NoError(t, err)
			for i := range history {
				if history[i].clone == old.clone {
					history[i].snap = b
				}
			}
		}
	}
	for i, h := range history {
		b, err := h.clone.MarshalSnapshot()
		require.NoError(t, err)
		require.Equal(t, string(h.snap), string(b), "clone %d changed after it was taken", i)
		restored, err := RestoreSnapshot(b)
		require.NoError(t, err)
		requireSameState(t, restored, h.clone, "clone %d", i)
	}
	return len(forms)
}

// TestTableShapeIsCanonical builds the same domains in different orders,
// through creates and drops, clones and a snapshot, and requires deeply
// equal tables; dropping every domain gives the empty table back.
func TestTableShapeIsCanonical(t *testing.T) {
	names := make([]string, 600) // more than one domain per leaf
	for i := range names {
		names[i] = fmt.Sprintf("d%d", i)
	}
	build := func(order []int, cloneEvery int) *State {
		s := NewState()
		for i, k := range order {
			mustApply(t, s, createUnpaced(names[k]), createUnpaced("temp"))
			mustApply(t, s, dropCmd("temp", false))
			if cloneEvery > 0 && i%cloneEvery == 0 {
				s = s.Clone()
			}
		}
		return s
	}
	ordered := make([]int, len(names))
	for i := range ordered {
		ordered[i] = i
	}
	reversed := make([]int, len(names))
	for i := range reversed {
		reversed[i] = len(names) - 1 - i
	}
	a := build(ordered, 0)
	require.Equal(t, len(names), len(a.Domains()))
	requireSameState(t, a, build(ordered, 7))
	require.Equal(t, tableNames(a), tableNames(build(reversed, 3)))
	snap, err := a.MarshalSnapshot()
	require.NoError(t, err)
	restored, err := RestoreSnapshot(snap)
	require.NoError(t, err)
	requireSameState(t, a, restored)

	for i, n := range names {
		if i%2 == 0 {
			a = a.Clone()
		}
		mustApply(t, a, dropCmd(n, false))
	}
	require.Nil(t, a.domains)
	require.Nil(t, a.flat)
	require.Zero(t, a.count)
	require.Empty(t, a.Domains())
}

// TestCloneConcurrentReaders clones and reads published clones from many
// goroutines while the working state applies and publishes, as the
// catalog FSM does; run under -race it checks that Clone writes nothing
// to a published state.
func TestCloneConcurrentReaders(t *testing.T) {
	s := baseState(t)
	initial := len(s.Domains())
	var mu sync.Mutex
	published := s.Clone()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				p := published
				mu.Unlock()
				c := p.Clone()
				_ = c.Domains()
				c.Apply(createUnpaced("reader-only"))
			}
		})
	}
	for i := range 200 {
		mustApply(t, s, createUnpaced(fmt.Sprintf("w%d", i)))
		if i%3 == 0 {
			mustApply(t, s, stopCmd("live"), startCmd("live", point(StartNow, 0, 0, 1), &nodeA))
		}
		p := s.Clone()
		mu.Lock()
		published = p
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	_, ok := s.Domain("reader-only")
	require.False(t, ok, "a reader's clone reached the working state")
	require.Len(t, published.Domains(), initial+200)
}

// tableNames is the shape of s's table: the names in every leaf, in order.
func tableNames(s *State) [tableFanout][tableFanout][]string {
	var out [tableFanout][tableFanout][]string
	if s.domains == nil {
		return out
	}
	for b, branch := range s.domains {
		if branch == nil {
			continue
		}
		for l, leaf := range branch {
			for _, d := range leaf.records() {
				out[b][l] = append(out[b][l], d.Name)
			}
		}
	}
	return out
}
