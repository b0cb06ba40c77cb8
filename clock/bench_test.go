package clock

import (
	"math"
	"math/rand/v2"
	"testing"
)

var (
	sinkInt64  int64
	sinkUint64 uint64
	sinkInt    int
)

func BenchmarkProject(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate float64
	}{
		{"rate=1", 1},
		{"rate=0.3", 0.3},
		{"rate=60", 60},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := Mapping{WallStartedAt: 1_700_000_000_000_000_000, LogicalStart: 1_600_000_000_000_000_000, Rate: bc.rate}
			wall := m.WallStartedAt
			var acc int64
			for b.Loop() {
				wall += 1_000_003
				v, _ := m.Project(wall)
				acc += v
			}
			sinkInt64 = acc
		})
	}
}

func BenchmarkWait(b *testing.B) {
	for _, bc := range []struct {
		name string
		rate float64
	}{
		{"rate=1", 1},
		{"rate=0.3", 0.3},
		{"rate=60", 60},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := Mapping{Rate: bc.rate}
			target := int64(0)
			var acc uint64
			for b.Loop() {
				target += 1_000_003
				v, _ := m.Wait(0, target)
				acc += v
			}
			sinkUint64 = acc
		})
	}
}

// admissionInput is a paced window with a one-second period and 100 ms skew,
// 10 000 periods after the origin, and event times spread over the whole
// eligible history plus some skew on either side, about a fifth admitted.
func admissionInput(b *testing.B, rows int) (Window, []int64) {
	return admissionInputAt(b, 1_700_000_000_000_000_000, 10_000, rows)
}

// admissionInputAt is admissionInput with the origin and the number of
// periods reached chosen by the caller.
func admissionInputAt(b *testing.B, origin int64, periods int64, rows int) (Window, []int64) {
	b.Helper()
	const period, skew = uint64(1e9), uint64(1e8)
	now := origin + periods*int64(period) + 5
	w, err := NewWindow(origin, period, skew, now)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	span := w.LastCenter() - w.FirstCenter() + 4*int64(period)
	ts := make([]int64, rows)
	for i := range ts {
		ts[i] = w.FirstCenter() - 2*int64(period) + r.Int64N(span)
	}
	return w, ts
}

// naiveScan is the obvious O(256) check: the window's fields are hoisted
// into locals and every eligible center is tested until one admits the row.
type naiveScan struct {
	first       int64
	centers     uint64
	period, skw uint64
}

func newNaiveScan(w Window) naiveScan {
	return naiveScan{first: w.FirstCenter(), centers: w.Frontier() - w.FirstPosition() + 1, period: w.Period(), skw: w.Skew()}
}

func (s naiveScan) admit(ts int64) bool {
	c := s.first
	for range s.centers {
		var d uint64
		if ts >= c {
			d = uint64(ts) - uint64(c)
		} else {
			d = uint64(c) - uint64(ts)
		}
		if d <= s.skw {
			return true
		}
		c = int64(uint64(c) + s.period)
	}
	return false
}

func BenchmarkAdmit(b *testing.B) {
	w, ts := admissionInput(b, 4096)
	n := 0
	for b.Loop() {
		for _, t := range ts {
			if w.Admit(t) {
				n++
			}
		}
	}
	sinkInt = n
	b.ReportMetric(float64(b.N)*float64(len(ts))/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkAdmitBatch(b *testing.B) {
	const rows = 4096
	w, ts := admissionInput(b, rows)
	bitmap := make([]uint64, BitmapWords(rows))
	// A window whose first center is within skew of the int64 minimum takes
	// the rotated two-threshold path.
	wc, tsc := admissionInputAt(b, math.MinInt64+1, 100, rows)
	for _, bc := range []struct {
		name  string
		admit func() int
	}{
		{"kernel", func() int { return w.AdmitBatch(ts, bitmap) }},
		{"kernel-lower-bound-clamped", func() int { return wc.AdmitBatch(tsc, bitmap) }},
		{"naive-scan", func() int {
			s := newNaiveScan(w)
			clear(bitmap)
			n := 0
			for i, t := range ts {
				if s.admit(t) {
					bitmap[i/64] |= 1 << (i % 64)
					n++
				}
			}
			return n
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				n += bc.admit()
			}
			sinkInt = n
			b.ReportMetric(float64(b.N)*rows/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
