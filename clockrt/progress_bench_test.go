package clockrt

import (
	"math"
	"testing"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// BenchmarkAcceptProgress is the receiver's cost per accepted tick with one
// subscribed observer.
func BenchmarkAcceptProgress(b *testing.B) {
	r := NewRegistry(timesource.NewFake(base))
	r.SetMaxClockOffset(math.MaxInt64) // ids run ahead of the fake clock
	if _, err := r.Install("d", paced(1, 1, 1)); err != nil {
		b.Fatal(err)
	}
	o, err := r.Observe("d")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := range b.N {
		o.Read()
		if ok, err := r.AcceptProgress("a", report(1, uint64(i)+1, base)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkAcceptProgressUnobserved is the cost with nobody watching.
func BenchmarkAcceptProgressUnobserved(b *testing.B) {
	r := NewRegistry(timesource.NewFake(base))
	r.SetMaxClockOffset(math.MaxInt64) // ids run ahead of the fake clock
	if _, err := r.Install("d", paced(1, 1, 1)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := range b.N {
		if ok, err := r.AcceptProgress("a", report(1, uint64(i)+1, base)); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
