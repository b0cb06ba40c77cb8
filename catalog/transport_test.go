package catalog

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/internal/testpki"
)

// newTestLayer returns a raft stream layer on a loopback port with node
// certificates from a fresh CA.
func newTestLayer(t *testing.T, handshake time.Duration) *tlsStreamLayer {
	t.Helper()
	m := testpki.New(t).Node("n1", "127.0.0.1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &tlsStreamLayer{
		ln:               tls.NewListener(ln, m.PeerServerConfig()),
		advertise:        ln.Addr(),
		client:           m.ClientConfig("", ""),
		handshakeTimeout: handshake,
		conns:            make(map[*trackedConn]struct{}),
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestStreamLayerBoundsSilentPeerHandshake(t *testing.T) {
	l := newTestLayer(t, 50*time.Millisecond)

	// A peer that connects and never speaks TLS.
	silent, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer silent.Close()

	conn, err := l.Accept()
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(make([]byte, 1))
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err, "the handshake of a silent peer must fail at its deadline")
	case <-time.After(10 * time.Second):
		t.Fatal("an accepted connection's handshake was not bounded")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Empty(t, l.conns, "a failed handshake closes and forgets the connection")
}

func TestStreamLayerCarriesDataAfterHandshake(t *testing.T) {
	// The bound is not what this test holds: generous, so a handshake
	// slowed by a busy machine and the race detector still completes.
	l := newTestLayer(t, time.Minute)

	// The accepting side reads at once, as raft's per-connection goroutine
	// does, and answers.
	served := make(chan error, 1)
	go func() {
		in, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer in.Close()
		buf := make([]byte, 6)
		if _, err := io.ReadFull(in, buf); err != nil {
			served <- err
			return
		}
		if string(buf) != "append" {
			served <- io.ErrUnexpectedEOF
			return
		}
		_, err = in.Write([]byte("ok"))
		served <- err
	}()
	out, err := l.Dial(raft.ServerAddress(l.Addr().String()), 5*time.Second)
	require.NoError(t, err)
	defer out.Close()
	_, err = out.Write([]byte("append"))
	require.NoError(t, err)
	reply := make([]byte, 2)
	_, err = io.ReadFull(out, reply)
	require.NoError(t, err)
	require.Equal(t, "ok", string(reply))
	require.NoError(t, <-served)
}
