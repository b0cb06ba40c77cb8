package client

import (
	"testing"
	"time"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/planner"
)

// BenchmarkRemoteStatement is one statement's round trip over the session
// protocol on loopback TLS: plan, send, execute, reply, decode.
func BenchmarkRemoteStatement(b *testing.B) {
	e := newEnv(b, "")
	c := e.dial(Config{})
	exec(b, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod;")
	ctx := ctxT(b)
	plan := planner.DescribeDomain{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Exec(ctx, plan); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoteScript runs a four-statement script text over the session
// protocol on loopback TLS: the text cut, each statement sent, parsed and
// planned on the server, run, replied to and decoded.
func BenchmarkRemoteScript(b *testing.B) {
	e := newEnv(b, "")
	c := e.dial(Config{})
	exec(b, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s;")
	ctx := ctxT(b)
	script := "USE prod; -- the main clock\nDESCRIBE DOMAIN;\nLIST DOMAINS LIKE 'p%';\nSHOW TRANSACTIONS;\n"
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.ExecText(ctx, script); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoteTick is one tick's way from the node's producer to the
// remote client's NextEvent.
func BenchmarkRemoteTick(b *testing.B) {
	e := newEnv(b, "")
	c := e.dial(Config{})
	exec(b, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; START AT NOW; ATTACH DOMAIN CLOCK;")
	e.event(c, "prod", follow.EventTick)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		e.advanceTick(c, "prod", time.Second, uint64(i)+2)
	}
}
