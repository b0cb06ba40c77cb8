package wire_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/wire"
)

// BenchmarkFrameWire is one tick frame encoded by the server and decoded by
// the client.
func BenchmarkFrameWire(b *testing.B) {
	f := frameCases[4]
	b.ReportAllocs()
	for range b.N {
		if _, err := wire.DecodeFrame(f.AppendJSON(nil)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResultSetWire is a three-row typed result set through the wire.
func BenchmarkResultSetWire(b *testing.B) {
	set := setCase()
	b.ReportAllocs()
	for range b.N {
		if _, err := wire.DecodeSet(wire.EncodeSet(set)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLineReader reads 1,000 short messages.
func BenchmarkLineReader(b *testing.B) {
	in := []byte(strings.Repeat(`{"type":"exec","id":1,"text":"USE prod;"}`+"\n", 1000))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for range b.N {
		lr := wire.NewLineReader(bytes.NewReader(in), wire.ClientMessageLimit)
		for {
			if _, err := lr.Next(); err != nil {
				break
			}
		}
	}
}
