package clockrt

import (
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

// stallSource is a time source whose paired readings take no lock, so that
// a goroutine reading it blocks only where the code under test makes it
// block, and one of whose readings can be made to stall. Its timers are
// the embedded fake's.
type stallSource struct {
	*timesource.Fake
	wall, mono atomic.Int64
	calls      atomic.Int64
	stalled    atomic.Pointer[stallPoint]
}

// stallPoint is a reading that stalls: the at-th Paired call since stall
// closes held and waits until free is closed, before it reads or, if
// after, once it has read.
type stallPoint struct {
	at         int64
	after      bool
	held, free chan struct{}
}

func newStallSource() *stallSource {
	s := &stallSource{Fake: timesource.NewFake(base)}
	s.wall.Store(base)
	return s
}

// stall makes the n-th next Paired call wait, before it reads, until
// release is called; held is closed when it is reached.
func (s *stallSource) stall(n int64) (held <-chan struct{}, release func()) {
	return s.stallAt(n, false)
}

func (s *stallSource) stallAt(n int64, after bool) (<-chan struct{}, func()) {
	p := &stallPoint{at: n, after: after, held: make(chan struct{}), free: make(chan struct{})}
	s.calls.Store(0)
	s.stalled.Store(p)
	var once sync.Once
	return p.held, func() { once.Do(func() { close(p.free) }) }
}

func (s *stallSource) Paired() timesource.Reading {
	p := s.stalled.Load()
	if p == nil || s.calls.Add(1) != p.at {
		return s.reading()
	}
	var r timesource.Reading
	if p.after {
		r = s.reading()
	}
	close(p.held)
	<-p.free
	if !p.after {
		r = s.reading()
	}
	return r
}

func (s *stallSource) reading() timesource.Reading {
	return timesource.Reading{Wall: s.wall.Load(), Mono: time.Duration(s.mono.Load())}
}

func (s *stallSource) Now() int64                   { return s.wall.Load() }
func (s *stallSource) Monotonic() time.Duration     { return time.Duration(s.mono.Load()) }
func (s *stallSource) PairTolerance() time.Duration { return 0 }

// advance moves the wall and the monotonic clock forward by d; set steps
// the wall alone. Neither is called while a read is under way.
func (s *stallSource) advance(d int64) { s.wall.Add(d); s.mono.Add(d) }
func (s *stallSource) set(wall int64)  { s.wall.Store(wall) }

// isParked reports whether f is a parked frame.
func isParked(f *frame) bool { return f.parked != nil }

// readsWithoutBlocking reads h on n goroutines of their own at once and
// returns their values once all have completed, as withoutBlocking does.
func readsWithoutBlocking(t *testing.T, n int, h *Handle) []int64 {
	t.Helper()
	fns := make([]func() (int64, error), n)
	for i := range fns {
		fns[i] = h.Now
	}
	return withoutBlocking(t, fns...)
}

// withoutBlocking runs each of fns on a goroutine of its own, all at once,
// and returns their values once all have completed. It fails the test as
// soon as one of them blocks (on a lock, a channel, a select) instead: one
// that waited for a goroutine the test holds would never complete. The
// test's cleanup waits for them, so whatever the test stopped must be let
// go by the test's own defers.
func withoutBlocking(t *testing.T, fns ...func() (int64, error)) []int64 {
	t.Helper()
	done := make(chan result, len(fns))
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	for _, fn := range fns {
		wg.Go(func() { blockFree(fn, done) })
	}
	var got []int64
	for len(got) < len(fns) {
		select {
		case res := <-done:
			require.NoError(t, res.err)
			got = append(got, res.v)
			continue
		default:
		}
		if stacks := blocked(); len(stacks) > 0 {
			require.FailNow(t, "a goroutine that must not block blocked", "%s", strings.Join(stacks, "\n\n"))
		}
		goruntime.Gosched()
	}
	return got
}

type result struct {
	v   int64
	err error
}

// blockFree is the goroutine of withoutBlocking: its name marks the
// goroutines blocked inspects.
//
//go:noinline
func blockFree(fn func() (int64, error), done chan<- result) {
	v, err := fn()
	done <- result{v, err}
}

// inBackground runs fn on a goroutine of its own, apart from those blocked
// inspects, and returns a function that waits for its result.
func inBackground(fn func() (int64, error)) func() (int64, error) {
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	return func() (int64, error) {
		res := <-done
		return res.v, res.err
	}
}

// blocked returns the stack of every blockFree goroutine that is waiting
// on a lock, a channel or a select, and nothing while each one runs, can
// run or has finished. A goroutine waiting in the state "semacquire" is
// not blocked by the code under test: every lock and wait group of package
// sync parks under a state of its own ("sync.Mutex.Lock" and the like),
// and "semacquire" is left to the Go runtime's own semaphores, taken by an
// allocation that starts a collection while another goroutine has stopped
// the world (as goruntime.Stack here does).
func blocked() []string {
	buf := make([]byte, 1<<16)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var stacks []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "clockrt.blockFree(") {
			continue
		}
		header, _, _ := strings.Cut(g, "\n")
		_, state, _ := strings.Cut(header, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		if strings.HasPrefix(state, "sync.") || strings.HasPrefix(state, "chan ") ||
			strings.HasPrefix(state, "select") || state == "sleep" {
			stacks = append(stacks, g)
		}
	}
	return stacks
}

// aheadLifecycle is a replacement of unpaced(1, 0) that projects UTC plus
// 1000ns (UTC before base counts no elapsed time).
func aheadLifecycle() Lifecycle {
	lc := paced(1, 1, 1)
	lc.Mapping = clock.Mapping{WallStartedAt: base, LogicalStart: base + 1000, Rate: 1}
	return lc
}

// TestReadsTakeNoLock: reads complete, and agree, while another goroutine
// holds the registry's lock or is stopped inside a change of the frame:
// a read stopped between parking the frame for a backward step and
// publishing the lowered one, or a replacement that changes the
// projection stopped at the same point with the registry's lock held.
// Several reads at once, each on the fast path or taking the slow path's
// forward re-base or backward lowering, all complete, finishing a parked
// frame themselves, and return what that frame would have given; the
// stopped goroutine then completes, and later reads do not fall below any
// of them.
func TestReadsTakeNoLock(t *testing.T) {
	const readers = 3
	ahead := aheadLifecycle()
	type paused struct {
		wall    int64                 // the wall while it is held, less base
		read    bool                  // the held goroutine is a read
		release func() (int64, error) // lets it go, once, and returns what it returned
		check   func(t *testing.T, r *Registry)
	}
	pauses := []struct {
		name  string
		pause func(t *testing.T, src *stallSource, r *Registry, h *Handle) paused
		want  [3]int64 // no step, a step forward, a step back: each read, less base
	}{
		{
			name: "registry locked",
			pause: func(t *testing.T, _ *stallSource, r *Registry, _ *Handle) paused {
				r.mu.Lock()
				return paused{wall: 100, release: sync.OnceValues(func() (int64, error) {
					r.mu.Unlock()
					return 0, nil
				})}
			},
			want: [3]int64{100, 5100, 100},
		},
		{
			name: "read stopped while lowering",
			pause: func(t *testing.T, src *stallSource, r *Registry, h *Handle) paused {
				src.set(base) // back 100ns
				// The fast path's reading, the slow path's, its
				// confirmation, then the reading that bounds the old frame.
				held, release := src.stall(4)
				t.Cleanup(release)
				wait := inBackground(h.Now)
				<-held
				require.True(t, isParked(h.alloc.Load().clock.frame.Load()), "the frame is parked")
				return paused{wall: 0, read: true, release: sync.OnceValues(func() (int64, error) {
					release()
					return wait()
				})}
			},
			want: [3]int64{100, 5000, 100},
		},
		{
			name: "replacement stopped while lowering",
			pause: func(t *testing.T, src *stallSource, r *Registry, h *Handle) paused {
				held, release := src.stall(1) // the reading that bounds the old frame
				t.Cleanup(release)
				wait := inBackground(func() (int64, error) {
					_, err := r.Install("d", ahead)
					return 0, err
				})
				<-held
				require.True(t, isParked(h.alloc.Load().clock.frame.Load()), "the frame is parked")
				return paused{
					wall: 100,
					release: sync.OnceValues(func() (int64, error) {
						release()
						return wait()
					}),
					check: func(t *testing.T, r *Registry) {
						require.Equal(t, StatePaced, r.Current("d").State())
						require.True(t, currentFrame(t, r).sameProjection(ahead.normalized()))
					},
				}
			},
			want: [3]int64{1100, 6100, 1000}, // UTC before the anchor counts no elapsed time
		},
	}
	steps := []struct {
		name string
		by   int64
	}{{"no step", 0}, {"step forward", 5000}, {"step back", -5000}}
	for _, p := range pauses {
		for i, step := range steps {
			t.Run(p.name+"/"+step.name, func(t *testing.T) {
				src := newStallSource()
				r := NewRegistry(src)
				install(t, r, "d", unpaced(1, 0))
				h, err := r.Bind("d")
				require.NoError(t, err)
				src.advance(100)
				high, err := h.Now()
				require.NoError(t, err)
				require.Equal(t, base+100, high)

				ps := p.pause(t, src, r, h)
				defer ps.release() // lets it go if the test ends early
				src.set(base + ps.wall + step.by)
				got := readsWithoutBlocking(t, readers, h)
				for _, v := range got {
					require.Equal(t, base+p.want[i], v)
				}

				v, err := ps.release()
				require.NoError(t, err)
				if ps.read {
					require.GreaterOrEqual(t, v, high, "the stopped read returned less than a read before it")
				}
				if ps.check != nil {
					ps.check(t, r)
				}
				later, err := h.Now()
				require.NoError(t, err)
				require.GreaterOrEqual(t, later, base+p.want[i], "a read after the others returned less")
			})
		}
	}
}

// TestStaleFrameChangesFail: a change of the frame derived from a frame
// that has since been replaced does not land. A read stopped with the
// reading it takes to re-base the frame forward, to park it for a backward
// step or to finish a parked frame, or stopped before it finishes the
// frame it parked, resumes after a replacement of the same generation has
// changed the projection (which completes meanwhile, finishing the parked
// frame itself): the frame keeps the replacement's projection, and every
// read from then on, the resumed one included, projects through it.
func TestStaleFrameChangesFail(t *testing.T) {
	ahead := aheadLifecycle()
	tests := []struct {
		name  string
		step  int64 // the wall's step before the read, from base+100
		call  int64 // the read's stopped reading: fast path, slow path, confirmation, finish
		after bool  // stopped once it has read
		want  int64 // what the read returns, less base
	}{
		{"re-base", 5000, 2, true, 6100},
		{"parking", -5000, 3, true, 1000},
		{"finishing", -5000, 4, true, 1000},
		{"finishing its own parking", -5000, 4, false, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newStallSource()
			r := NewRegistry(src)
			install(t, r, "d", unpaced(1, 0))
			h, err := r.Bind("d")
			require.NoError(t, err)
			src.advance(100)
			high, err := h.Now()
			require.NoError(t, err)
			require.Equal(t, base+100, high)

			src.set(base + 100 + tt.step)
			held, release := src.stallAt(tt.call, tt.after)
			defer release()
			wait := inBackground(h.Now)
			<-held
			withoutBlocking(t, func() (int64, error) {
				_, err := r.Install("d", ahead)
				return 0, err
			})
			release()
			got, err := wait()
			require.NoError(t, err)
			require.Equal(t, base+tt.want, got)

			f := currentFrame(t, r)
			require.False(t, isParked(f))
			require.True(t, f.sameProjection(ahead.normalized()), "the replacement's projection was undone")
			later, err := h.Now()
			require.NoError(t, err)
			require.Equal(t, base+tt.want, later)
		})
	}
}
