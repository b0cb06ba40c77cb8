package faultnet

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo serves an echo listener until the test ends and returns its
// address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			go func() { _, _ = io.Copy(c, c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// roundTrip writes msg and reads it back within wait, reporting whether it
// came back.
func roundTrip(t *testing.T, c net.Conn, msg string, wait time.Duration) bool {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(wait)))
	if _, err := c.Write([]byte(msg)); err != nil {
		return false
	}
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	return err == nil && string(buf) == msg
}

// absent is how long a test waits to see that stalled bytes stay stalled:
// their absence does not depend on the machine's speed.
const absent = 100 * time.Millisecond

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault func(n *Network)
		// passes: a round trip across the link works under the fault.
		passes bool
	}{
		{"no fault", func(*Network) {}, true},
		{"cut a→b", func(n *Network) { n.Cut("a", "b") }, false},
		{"cut b→a", func(n *Network) { n.Cut("b", "a") }, false},
		{"cut of another link", func(n *Network) { n.Cut("a", "c"); n.Cut("c", "b") }, true},
		{"partition", func(n *Network) { n.Partition([]string{"a"}, []string{"b", "c"}) }, false},
		{"partition leaves a side whole", func(n *Network) { n.Partition([]string{"a", "b"}, []string{"c"}) }, true},
		{"isolate a", func(n *Network) { n.Isolate("a", "a", "b", "c") }, false},
		{"isolate b", func(n *Network) { n.Isolate("b", "a", "b", "c") }, false},
		{"isolate c", func(n *Network) { n.Isolate("c", "a", "b", "c") }, true},
		{"delay", func(n *Network) { n.Delay("a", "b", time.Millisecond, time.Millisecond) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := New()
			defer n.Close()
			addr := echo(t)
			n.Register("b", addr)
			c, err := n.Dialer("a")(context.Background(), "tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			require.True(t, roundTrip(t, c, "before", 10*time.Second))
			tt.fault(n)
			if tt.passes {
				require.True(t, roundTrip(t, c, "during", 10*time.Second))
				return
			}
			require.False(t, roundTrip(t, c, "stall", absent), "bytes crossed a cut link")
			// A new connection does not complete while the link is cut.
			ctx, cancel := context.WithTimeout(context.Background(), absent)
			_, err = n.Dialer("a")(ctx, "tcp", addr)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			n.Heal()
			c2, err := n.Dialer("a")(context.Background(), "tcp", addr)
			require.NoError(t, err)
			defer c2.Close()
			require.True(t, roundTrip(t, c2, "healed", 10*time.Second))
		})
	}
}

// TestCutStallsThenDelivers: bytes written across a cut are delivered,
// in order, once it heals, as TCP's retransmission would.
func TestCutStallsThenDelivers(t *testing.T) {
	n := New()
	defer n.Close()
	addr := echo(t)
	n.Register("b", addr)
	c, err := n.Dialer("a")(context.Background(), "tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	n.Cut("a", "b")
	_, err = c.Write([]byte("held"))
	require.NoError(t, err) // the proxy took it; it stalls there
	require.NoError(t, c.SetReadDeadline(time.Now().Add(absent)))
	_, err = c.Read(make([]byte, 4))
	require.Error(t, err)
	n.Heal()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 4)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	require.Equal(t, "held", string(buf))
}

func TestResetRefusesAndResets(t *testing.T) {
	n := New()
	defer n.Close()
	addr := echo(t)
	n.Register("b", addr)
	c, err := n.Dialer("a")(context.Background(), "tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	n.Reset("b", "a")
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the open connection is reset")
	_, err = n.Dialer("a")(context.Background(), "tcp", addr)
	require.ErrorIs(t, err, ErrLinkReset)
	n.Heal()
	c2, err := n.Dialer("a")(context.Background(), "tcp", addr)
	require.NoError(t, err)
	defer c2.Close()
	require.True(t, roundTrip(t, c2, "x", 10*time.Second))
}

// TestDelayHoldsItsDelay holds a delayed link's bytes for exactly the
// delay on the network's time source: a fake one that the test advances,
// so the machine's speed decides nothing. Bytes held 1 ns short of the
// delay are still held; at the delay they pass.
func TestDelayHoldsItsDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := timesource.NewFake(0)
	n := NewWithTime(src)
	defer n.Close()
	addr := echo(t)
	n.Register("b", addr)
	c, err := n.Dialer("a")(ctx, "tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	const d = 50 * time.Millisecond
	n.Delay("a", "b", d, 0)
	_, err = c.Write([]byte("slow"))
	require.NoError(t, err)
	require.NoError(t, src.BlockUntil(ctx, 1), "the proxy arms the delay of the chunk it holds")
	src.Advance(d - time.Nanosecond)
	require.Equal(t, 1, src.Armed(), "1 ns short of its delay the chunk is still held")
	require.NoError(t, c.SetReadDeadline(time.Now().Add(absent)))
	_, err = c.Read(make([]byte, 4))
	require.Error(t, err, "nothing came back before the delay ran out")
	src.Advance(time.Nanosecond)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, 4)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	require.Equal(t, "slow", string(buf))
}

func TestUnregisteredAddressAndClose(t *testing.T) {
	n := New()
	addr := echo(t)
	c, err := n.Dialer("a")(context.Background(), "tcp", addr)
	require.NoError(t, err)
	n.Isolate("a", "b")
	require.True(t, roundTrip(t, c, "direct", 10*time.Second), "an address nobody registered carries no faults")
	_ = c.Close()
	n.Register("b", addr)
	// A dial across the cut waits; closing the network ends it.
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := n.Dialer("a")(ctx, "tcp", addr)
		errc <- err
	}()
	n.Close()
	require.ErrorIs(t, <-errc, ErrClosed)
	_, err = n.Dialer("a")(context.Background(), "tcp", addr)
	require.True(t, errors.Is(err, ErrClosed))
}
