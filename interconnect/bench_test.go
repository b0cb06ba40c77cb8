package interconnect

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func BenchmarkDecodeProgress(b *testing.B) {
	body, err := json.Marshal(ProgressOf(report(42)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeProgress(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProgressRoundTrip is one progress request from an authority to
// a receiver over HTTP/2 with mutual TLS on loopback, the receiver
// evaluating it against a real runtime registry.
func BenchmarkProgressRoundTrip(b *testing.B) {
	p := newPKI(b)
	rcv := newReceiver(b)
	srv := serve(b, p, NewHandler(rcv, nil, nil))
	c := clientFor(b, p.n1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := uint64(0)
	for b.Loop() {
		id++
		reply, err := c.Progress(ctx, addrOf(srv), report(id))
		if err != nil || reply.Outcome != OutcomeAccepted {
			b.Fatal(err, reply)
		}
	}
}
