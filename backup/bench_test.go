package backup

import (
	"fmt"
	"testing"
)

func benchArchive(n int) Archive {
	a := cluster()
	for i := range n {
		a.Domains = append(a.Domains, pacedRunning(fmt.Sprintf("d%04d", i), 60))
	}
	return a
}

// BenchmarkEncode is the cost of writing an archive of 100 running paced
// domains, in memory.
func BenchmarkEncode(b *testing.B) {
	a := benchArchive(100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode is the cost of verifying and reading that archive.
func BenchmarkDecode(b *testing.B) {
	raw, err := Encode(benchArchive(100))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}
