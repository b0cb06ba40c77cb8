package clockrt

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
)

// laggingSource is a fake source with a pair tolerance whose paired
// readings can be made to lag: each queued lag is taken off the wall half
// of one reading, as a thread descheduled between the halves of time.Now
// returns a wall read that long before its monotonic half.
type laggingSource struct {
	*timesource.Fake
	tol time.Duration

	mu   sync.Mutex
	lags []int64
	hold int           // the hold-th next Paired call waits for release; 0 for none
	held chan struct{} // closed when that call is reached
	free chan struct{} // closed to let it take its reading
}

// nowInBackground reads h.Now on a goroutine of its own and sends the
// value, or math.MinInt64 for an error, on the channel it returns.
func nowInBackground(h *Handle) <-chan int64 {
	done := make(chan int64, 1)
	go func() {
		v, err := h.Now()
		if err != nil {
			v = math.MinInt64
		}
		done <- v
	}()
	return done
}

// laggingUnpaced returns a lagging source with tolerance tol, a registry
// on it with the unpaced domain "d" installed, and a handle bound to it.
func laggingUnpaced(t *testing.T, tol time.Duration) (*laggingSource, *Registry, *Handle) {
	t.Helper()
	src := newLaggingSource(tol)
	r := NewRegistry(src)
	install(t, r, "d", unpaced(1, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	return src, r, h
}

func newLaggingSource(tol time.Duration) *laggingSource {
	return &laggingSource{Fake: timesource.NewFake(base), tol: tol}
}

// lag makes the next len(lags) paired readings' wall halves lag by lags.
func (s *laggingSource) lag(lags ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lags = append(s.lags, lags...)
}

// holdCall makes the n-th next Paired call wait, before it takes its
// reading, until release is closed; held is closed when it is reached.
func (s *laggingSource) holdCall(n int) (held <-chan struct{}, release chan<- struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold, s.held, s.free = n, make(chan struct{}), make(chan struct{})
	return s.held, s.free
}

func (s *laggingSource) Paired() timesource.Reading {
	s.mu.Lock()
	if s.hold > 0 {
		if s.hold--; s.hold == 0 {
			held, free := s.held, s.free
			s.mu.Unlock()
			close(held)
			<-free
			s.mu.Lock()
		}
	}
	s.mu.Unlock()
	r := s.Fake.Paired()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lags) > 0 {
		r.Wall -= s.lags[0]
		s.lags = s.lags[1:]
	}
	return r
}

func (s *laggingSource) PairTolerance() time.Duration { return s.tol }

func (s *laggingSource) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lags)
}

func currentFrame(t *testing.T, r *Registry) *frame {
	t.Helper()
	f := r.Current("d").clock.frame.Load()
	require.NotNil(t, f)
	return f
}

// TestReadTolerance steps the wall by amounts at, just inside and just
// outside the source's pair tolerance: inside it the read keeps to the
// frame (the monotonic clock) and stores nothing, outside it a forward
// step re-bases the frame and a backward one holds the clock at the
// watermark until the lowered frame passes it.
func TestReadTolerance(t *testing.T) {
	const tol = 1000
	tests := []struct {
		name      string
		step      int64 // added to the wall after 5000ns of monotonic time
		want      int64 // the read right after the step, less base
		rebased   bool  // the frame changed
		watermark bool  // the watermark was raised
		after     int64 // the read after another 1000ns, less base
	}{
		{"far behind", -5000, 5000, true, true, 5000},
		{"just outside behind", -tol - 1, 5000, true, true, 5000},
		{"at tolerance behind", -tol, 5000, false, false, 6000},
		{"just inside behind", -tol + 1, 5000, false, false, 6000},
		{"agrees", 0, 5000, false, false, 6000},
		{"just inside ahead", tol - 1, 5000, false, false, 6000},
		{"at tolerance ahead", tol, 5000, false, false, 6000},
		{"just outside ahead", tol + 1, 5000 + tol + 1, true, false, 6000 + tol + 1},
		{"far ahead", 5000, 10000, true, false, 11000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, r, h := laggingUnpaced(t, tol)
			src.Advance(5000)
			got, err := h.Now()
			require.NoError(t, err)
			require.Equal(t, base+5000, got)
			before := currentFrame(t, r)

			src.Set(src.Now() + tt.step)
			got, err = h.Now()
			require.NoError(t, err)
			require.Equal(t, base+tt.want, got)
			if tt.rebased {
				require.NotSame(t, before, currentFrame(t, r))
			} else {
				require.Same(t, before, currentFrame(t, r), "a read that agrees stores nothing")
			}
			w, ok := r.Current("d").Watermark()
			require.Equal(t, tt.watermark, ok)
			if tt.watermark {
				require.Equal(t, base+5000, w, "the watermark bounds what the old frame returned")
			}

			src.Advance(1000)
			got, err = h.Now()
			require.NoError(t, err)
			require.Equal(t, base+tt.after, got)
		})
	}
}

// TestReadPacedStepBack: a paced clock stepped back holds at the bound of
// the old frame and resumes at the lowered projection once it passes.
func TestReadPacedStepBack(t *testing.T) {
	r, f := newFakeRegistry(t)
	install(t, r, "d", paced(1, 3, 0))
	h, err := r.Bind("d")
	require.NoError(t, err)
	start := base - 10*second
	f.Advance(100)
	got, err := h.Now()
	require.NoError(t, err)
	require.Equal(t, start+300, got)
	f.Set(base + 40) // 60ns back
	for _, tt := range []struct {
		advance time.Duration
		want    int64
	}{{0, start + 300}, {59, start + 300}, {1, start + 300}, {1, start + 303}} {
		f.Advance(tt.advance)
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
	}
	w, ok := r.Current("d").Watermark()
	require.True(t, ok)
	require.Equal(t, start+300, w)
}

// TestReadJitter: a pair whose wall half lags its monotonic half looks
// like a backward step. One such reading is told apart by the second
// reading the slow path takes and changes nothing; a lag within the
// tolerance never leaves the fast path; a calibration from a lagging pair
// is corrected forward by the next reading; two lagging readings in a row
// are taken for a step, and reads hold at the watermark (never decreasing)
// until a reading re-bases the frame forward again.
func TestReadJitter(t *testing.T) {
	const tol = 1000
	t.Run("one lagging reading", func(t *testing.T) {
		src, r, h := laggingUnpaced(t, tol)
		before := currentFrame(t, r)
		src.Advance(500)
		src.lag(1_000_000)
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, base+500, got)
		require.Zero(t, src.pending(), "the lagging reading was taken")
		require.Same(t, before, currentFrame(t, r))
		_, ok := r.Current("d").Watermark()
		require.False(t, ok)
	})
	t.Run("lag within the tolerance", func(t *testing.T) {
		src, r, h := laggingUnpaced(t, tol)
		before := currentFrame(t, r)
		src.Advance(500)
		src.lag(tol)
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, base+500, got)
		require.Same(t, before, currentFrame(t, r))
	})
	t.Run("lagging calibration", func(t *testing.T) {
		src := newLaggingSource(tol)
		r := NewRegistry(src)
		src.lag(1_000_000)
		install(t, r, "d", unpaced(1, 0))
		h, err := r.Bind("d")
		require.NoError(t, err)
		require.Equal(t, base-1_000_000, currentFrame(t, r).wall)
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, base, got, "the frame is re-based forward to the wall")
		src.Advance(10)
		got, err = h.Now()
		require.NoError(t, err)
		require.Equal(t, base+10, got)
	})
	t.Run("two lagging readings", func(t *testing.T) {
		src, r, h := laggingUnpaced(t, tol)
		src.Advance(500)
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, base+500, got)
		src.lag(1_000_000, 1_000_000, 1_000_000) // the third is the reading after parking
		got, err = h.Now()
		require.NoError(t, err)
		require.Equal(t, base+500, got, "held at the watermark")
		w, ok := r.Current("d").Watermark()
		require.True(t, ok)
		require.Equal(t, base+500, w)
		src.Advance(10)
		got, err = h.Now()
		require.NoError(t, err)
		require.Equal(t, base+510, got, "the next reading re-based the frame forward")
	})
}

// TestLoweringParksTheFrame: while a backward step is being absorbed the
// frame is parked, so that no read completes on the old frame with a
// reading taken after the one that bounds it, and the watermark stays the
// old frame's floor until the lowered frame is published.
func TestLoweringParksTheFrame(t *testing.T) {
	src, r, h := laggingUnpaced(t, 0)
	src.Advance(100)
	old := currentFrame(t, r)
	src.Set(base)
	// The fast path's reading, the slow path's, its confirmation, then the
	// reading that bounds the old frame.
	held, release := src.holdCall(4)
	done := nowInBackground(h)
	<-held
	published := r.Current("d").clock.frame.Load()
	_, raised := r.Current("d").Watermark()
	close(release)
	require.False(t, raised, "the watermark is the old frame's floor until the lowered frame is published")
	require.NotNil(t, published.parked, "the old frame is still published while the bound is read")
	require.Same(t, old, published.parked.from)
	require.Equal(t, base+100, <-done)
}

// TestReadRevalidatesItsFrame: a read that loaded a frame before it was
// lowered, and took its reading after, does not complete on the old frame
// even when the wall agrees with it again: a later read could otherwise
// return less than it did. That holds for the fast path's reading and for
// the slow path's first and confirming readings alike.
func TestReadRevalidatesItsFrame(t *testing.T) {
	const tol = 1000
	tests := []struct {
		name string
		lags []int64 // the stopped read's readings before the one it takes late
	}{
		{"fast path", nil},
		{"slow path", []int64{1_000_000}},
		{"slow path confirming", []int64{1_000_000, 1_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, _, h := laggingUnpaced(t, tol)
			src.Advance(100)
			src.lag(tt.lags...)
			held, release := src.holdCall(len(tt.lags) + 1)
			free := sync.OnceFunc(func() { close(release) })
			defer free()
			done := nowInBackground(h)
			<-held // the reader has loaded the frame
			require.Zero(t, src.pending())

			src.Set(base + 100 - 1500) // a step back beyond the tolerance
			// The stopped read does not hold this one up.
			got := withoutBlocking(t, h.Now)[0]
			require.Equal(t, base+100, got, "held at the old frame's bound")
			// The wall moves to within the tolerance of both the old frame
			// and the lowered one, and time passes.
			src.Set(base + 100 - 700)
			src.Advance(50)
			free()
			first := <-done
			later, err := h.Now()
			require.NoError(t, err)
			require.GreaterOrEqual(t, later, first, "a read after another returned less")
			require.Equal(t, base+100, first)
		})
	}
}

// TestFastPathDeclinesAParkedFrame: a parked frame carries no calibration,
// and a fast read declines it even for a reading that would agree with its
// unset fields.
func TestFastPathDeclinesAParkedFrame(t *testing.T) {
	src := newStallSource()
	src.set(100)
	src.advance(0)
	src.mono.Store(100)
	old := newFrame(timesource.Reading{Wall: 0, Mono: 0}, 0, unpaced(1, 0), math.MinInt64)
	c := &generationClock{}
	c.frame.Store(&frame{parked: &lowering{from: old, to: old}})
	_, ok := c.readFast(src)
	require.False(t, ok)
	got, err := c.readSlow(src)
	require.NoError(t, err)
	require.Equal(t, int64(100), got, "the slow path finishes the parking")
	require.False(t, isParked(c.frame.Load()))
}

// TestReplacementKeepsFrame: a replacement of the same generation with the
// same projection inherits the frame itself, so reads of the old and new
// installations agree; one that changes the projection publishes a frame
// whose floor bounds every read before it.
func TestReplacementKeepsFrame(t *testing.T) {
	t.Run("same projection", func(t *testing.T) {
		r, f := newFakeRegistry(t)
		install(t, r, "d", paced(1, 60, 0))
		h, err := r.Bind("d")
		require.NoError(t, err)
		f.Advance(100)
		high, err := h.Now()
		require.NoError(t, err)
		f.Set(base) // back 100ns
		held, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, high, held)
		before := currentFrame(t, r)
		moved := paced(1, 60, 0)
		moved.Authority = fenceB
		install(t, r, "d", moved)
		require.Same(t, before, currentFrame(t, r))
		got, err := h.Now()
		require.NoError(t, err)
		require.Equal(t, high, got)
		f.Advance(101)
		got, err = h.Now()
		require.NoError(t, err)
		require.Equal(t, high+60, got)
	})
	t.Run("projection changes", func(t *testing.T) {
		tests := []struct {
			name     string
			from, to Lifecycle
			rate     int64 // the new projection's logical ns per ns
		}{
			{"paced rate falls", paced(1, 60, 0), paced(1, 1, 1), 1},
			{"paced to unpaced", paced(1, 60, 0), unpaced(1, 1), 1},
			{"unpaced to paced", unpaced(1, 0), paced(1, 1.0/16, 1), 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r, f := newFakeRegistry(t)
				install(t, r, "d", tt.from)
				h, err := r.Bind("d")
				require.NoError(t, err)
				f.Advance(100)
				high, err := h.Now()
				require.NoError(t, err)
				install(t, r, "d", tt.to)
				got, err := h.Now()
				require.NoError(t, err)
				now, err := projectLifecycle(tt.to.normalized(), base+100)
				require.NoError(t, err)
				require.Equal(t, max(high, now), got, "at least the old projection's bound")
				w, ok := r.Current("d").Watermark()
				require.True(t, ok)
				require.Equal(t, high, w)
				require.True(t, currentFrame(t, r).sameProjection(tt.to.normalized()))
				if tt.rate > 0 {
					// Projected far enough that the new clock passes the floor.
					f.Advance(timeDuration(20 * second))
					got, err = h.Now()
					require.NoError(t, err)
					want, err := projectLifecycle(tt.to.normalized(), base+100+20*second)
					require.NoError(t, err)
					require.Equal(t, max(high, want), got)
				}
			})
		}
	})
}

func projectLifecycle(lc Lifecycle, wall int64) (int64, error) {
	if lc.State != StatePaced {
		return wall, nil
	}
	return lc.Mapping.Project(wall)
}

// TestReadsUnderSteps is the guarantee under racing readers: a stepper
// moves the fake clock forward, steps its wall backward and forward, makes
// some paired readings lag (with a nonzero tolerance), moves the authority
// (same generation) and switches the projection between two mappings,
// while readers read. Each reader's reads
// never decrease; a read that starts after another has returned is at
// least that read; and every read is at most the projection, through
// either mapping, of the largest UTC any paired reading of the source has
// reached by the time it returns (its wall minus its monotonic reading, the
// largest over the run, plus the monotonic reading now).
func TestReadsUnderSteps(t *testing.T) {
	const (
		readers = 4
		steps   = 2000
	)
	for _, tol := range []time.Duration{0, 300} {
		t.Run(fmt.Sprintf("tolerance %d", tol), func(t *testing.T) {
			src := newLaggingSource(tol)
			r := NewRegistry(src)
			lcs := [2]Lifecycle{paced(1, 3, 0), paced(1, 2, 0)}
			lcs[1].Mapping.LogicalStart += 50
			install(t, r, "d", lcs[0])

			var maxOffset atomic.Int64 // the largest wall minus mono the source has shown
			maxOffset.Store(base)
			var completed atomic.Int64 // the largest value a finished read returned
			completed.Store(math.MinInt64)
			var reads, backward atomic.Int64
			stop := make(chan struct{})
			errs := make(chan error, readers)
			var wg sync.WaitGroup
			for i := range readers {
				wg.Go(func() {
					errs <- func() error {
						h, err := r.Bind("d")
						if err != nil {
							return err
						}
						last := int64(math.MinInt64)
						for n := 0; ; n++ {
							select {
							case <-stop:
								return nil
							default:
							}
							floor := completed.Load()
							got, err := h.Now()
							if err != nil {
								return err
							}
							bound := int64(math.MinInt64)
							u := maxOffset.Load() + int64(src.Monotonic())
							for _, lc := range lcs {
								p, err := lc.Mapping.Project(u)
								if err != nil {
									return err
								}
								bound = max(bound, p)
							}
							switch {
							case got < last:
								return fmt.Errorf("reader %d read %d after %d", i, got, last)
							case got < floor:
								return fmt.Errorf("reader %d read %d after another read returned %d", i, got, floor)
							case got > bound:
								return fmt.Errorf("reader %d read %d beyond the bound %d of any reading", i, got, bound)
							}
							last = got
							for {
								c := completed.Load()
								if got <= c || completed.CompareAndSwap(c, got) {
									break
								}
							}
							reads.Add(1)
							if n%8 == 0 {
								goruntime.Gosched()
							}
						}
					}()
				})
			}
			progress := func() {
				want := reads.Load() + 2
				for reads.Load() < want && len(errs) == 0 {
					goruntime.Gosched()
				}
			}

			rng := rand.New(rand.NewPCG(1, uint64(tol)))
			wall, mono := base, int64(0)
			for i := range steps {
				if tol > 0 && rng.IntN(8) == 0 {
					// Pairs whose wall half lags, within the tolerance
					// and beyond it.
					src.lag(rng.Int64N(int64(3*tol)), rng.Int64N(int64(3*tol)))
				}
				switch rng.IntN(6) {
				case 0, 1:
					d := rng.Int64N(1000)
					src.Advance(time.Duration(d))
					wall, mono = wall+d, mono+d
				case 2, 3:
					wall -= 1 + rng.Int64N(3000)
					backward.Add(1)
					src.Set(wall)
				case 4:
					wall += 1 + rng.Int64N(3000)
					maxOffset.Store(max(maxOffset.Load(), wall-mono))
					src.Set(wall)
				case 5:
					lc := lcs[rng.IntN(2)]
					lc.Revision = uint64(i)
					if rng.IntN(2) == 0 {
						lc.Authority = fenceB
					}
					install(t, r, "d", lc)
				}
				progress()
			}
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Greater(t, reads.Load(), int64(steps))
			require.Greater(t, backward.Load(), int64(steps/6))
		})
	}
}

// TestFrameArithmetic checks the frame's UTC and its comparison with the
// wall against math/big at the ends of the int64 range.
func TestFrameArithmetic(t *testing.T) {
	ends := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, base, math.MaxInt64 - 1, math.MaxInt64}
	tols := []uint64{0, 1, 1000, math.MaxInt64, math.MaxUint64}
	for _, wall := range ends {
		for _, mono0 := range ends {
			for _, mono := range ends {
				for _, readWall := range ends {
					for _, tol := range tols {
						checkFrameArithmetic(t, wall, mono0, mono, readWall, tol)
					}
				}
			}
		}
	}
}

func FuzzFrameArithmetic(f *testing.F) {
	f.Add(base, int64(0), int64(100), base+100, uint64(0))
	f.Add(int64(math.MaxInt64-5), int64(1), int64(math.MaxInt64), int64(math.MaxInt64), uint64(1000))
	f.Add(int64(math.MinInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, wall, mono0, mono, readWall int64, tol uint64) {
		checkFrameArithmetic(t, wall, mono0, mono, readWall, tol)
	})
}

func checkFrameArithmetic(t *testing.T, wall, mono0, mono, readWall int64, tol uint64) {
	t.Helper()
	fr := &frame{wall: wall, mono: time.Duration(mono0), tol: tol}
	// utc is wall + max(0, mono − mono0), saturated at the largest int64.
	elapsed := new(big.Int).Sub(big.NewInt(mono), big.NewInt(mono0))
	if elapsed.Sign() < 0 {
		elapsed.SetInt64(0)
	}
	want := new(big.Int).Add(big.NewInt(wall), elapsed)
	if want.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		want.SetInt64(math.MaxInt64)
	}
	u := fr.utc(time.Duration(mono))
	if u != want.Int64() {
		t.Fatalf("utc(wall %d, mono0 %d, mono %d) = %d, want %s", wall, mono0, mono, u, want)
	}
	diff := new(big.Int).Sub(big.NewInt(readWall), big.NewInt(u))
	bigTol := new(big.Int).SetUint64(tol)
	wantCmp := wallAgrees
	switch {
	case diff.Cmp(bigTol) > 0:
		wantCmp = wallAhead
	case new(big.Int).Neg(diff).Cmp(bigTol) > 0:
		wantCmp = wallBehind
	}
	if got := fr.compare(readWall, u); got != wantCmp {
		t.Fatalf("compare(wall %d, utc %d, tolerance %d) = %d, want %d", readWall, u, tol, got, wantCmp)
	}
}

// TestFrameBoundAtOverflow: a frame whose projection has left the int64
// range bounds its reads by the largest int64, and a read there fails
// typed rather than returning a clamped value.
func TestFrameBoundAtOverflow(t *testing.T) {
	lc := paced(1, 1, 0)
	lc.Mapping.LogicalStart = math.MaxInt64 - 10
	fr := newFrame(timesource.Reading{Wall: base, Mono: 0}, 0, lc, math.MinInt64)
	require.Equal(t, int64(math.MaxInt64-10), fr.bound(0))
	require.Equal(t, int64(math.MaxInt64), fr.bound(10))
	require.Equal(t, int64(math.MaxInt64), fr.bound(11))
	_, err := fr.project(fr.utc(11))
	require.ErrorIs(t, err, clock.ErrOverflow)
}
