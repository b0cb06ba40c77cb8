package interconnect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/pki"
)

// nextRevision reads the stream's next update and returns its revision.
func nextRevision(t *testing.T, s *InstalledStream) uint64 {
	t.Helper()
	u, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, InstalledType, u.Type)
	require.EqualValues(t, 11, u.Incarnation, "the receiver's incarnation")
	return u.Revision
}

// The installed stream sends the receiver's installed revision at once,
// then every revision it installs, and, when nothing is installed for a
// heartbeat, the same revision again; at a heartbeat it checks the
// subscriber's membership again and ends the stream of a node that is no
// longer a member.
func TestInstalledStreamPushesEachRevision(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	src := timesource.NewFake(issued.UnixNano())
	srv := serve(t, p, NewHandler(rcv, nil, nil).WithStreamClock(src, time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := clientFor(t, p.n1).InstalledStream(ctx, addrOf(srv))
	require.NoError(t, err)
	defer s.Close()

	require.EqualValues(t, 5, nextRevision(t, s), "the revision installed when the stream opened")
	for _, rev := range []uint64{6, 7, 9} {
		rcv.advance(rev)
		require.Equal(t, rev, nextRevision(t, s))
	}
	require.NoError(t, src.BlockUntil(ctx, 1), "the heartbeat is armed")
	src.Advance(time.Second)
	require.EqualValues(t, 9, nextRevision(t, s), "a heartbeat repeats the newest revision")

	rcv.mu.Lock()
	rcv.standings["n1"] = Standing{}
	rcv.mu.Unlock()
	require.NoError(t, src.BlockUntil(ctx, 1))
	src.Advance(time.Second)
	_, err = s.Next()
	require.ErrorIs(t, err, ErrUnreachable, "the stream of a node that left ends at the next heartbeat")
}

// Only a member with a node certificate may subscribe, and one member
// holds at most MaxInstalledStreamsPerCaller streams.
func TestInstalledStreamRefusesWhoItMust(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	var m Metrics
	srv := serve(t, p, NewHandler(rcv, &m, nil))
	anon := &pki.Material{Pool: p.n1.Pool}
	cases := []struct {
		name string
		as   *pki.Material
	}{
		{"no client certificate", anon},
		{"a client certificate is not a node", p.alice},
		{"a node that is not a member", p.outsider},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := clientFor(t, c.as).InstalledStream(ctx, addrOf(srv))
			require.ErrorIs(t, err, ErrForbidden)
		})
	}
	require.EqualValues(t, len(cases), m.Forbidden.Load())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := clientFor(t, p.n1)
	for range MaxInstalledStreamsPerCaller {
		s, err := c.InstalledStream(ctx, addrOf(srv))
		require.NoError(t, err)
		defer s.Close()
		require.EqualValues(t, 5, nextRevision(t, s))
	}
	_, err := c.InstalledStream(ctx, addrOf(srv))
	require.ErrorIs(t, err, ErrBusy)
	s, err := clientFor(t, p.n3).InstalledStream(ctx, addrOf(srv))
	require.NoError(t, err, "the limit is per caller")
	require.NoError(t, s.Close())
}

// gatedWriter is a ResponseWriter whose writes wait while the gate they
// began under is shut; every write reports its line on arrived before it
// waits.
type gatedWriter struct {
	header  http.Header
	arrived chan string

	mu   sync.Mutex
	gate chan struct{} // closed while open
}

func (g *gatedWriter) Header() http.Header { return g.header }
func (g *gatedWriter) WriteHeader(int)     {}
func (g *gatedWriter) Flush()              {}

func (g *gatedWriter) Write(b []byte) (int, error) {
	g.mu.Lock()
	gate := g.gate // the gate as the write began
	g.mu.Unlock()
	g.arrived <- string(b)
	<-gate
	return len(b), nil
}

func (g *gatedWriter) set(open bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.gate:
		if !open {
			g.gate = make(chan struct{})
		}
	default:
		if open {
			close(g.gate)
		}
	}
}

// A subscriber that does not read holds up only its own stream: while a
// write to it is blocked, the receiver installs revision after revision
// without waiting, and once the write completes the stream sends only
// the newest.
func TestInstalledStreamCoalescesForASlowReader(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	h := NewHandler(rcv, nil, nil).WithStreamClock(timesource.NewFake(issued.UnixNano()), time.Second)
	leaf, err := x509.ParseCertificate(p.n1.Certificate.Certificate[0])
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, PathInstalledStream, nil)
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
	w := &gatedWriter{header: http.Header{}, arrived: make(chan string, 1024), gate: make(chan struct{})}
	w.set(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, r)
	}()
	defer func() { cancel(); w.set(true); <-done }()
	revision := func() uint64 {
		var u InstalledUpdate
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSuffix(<-w.arrived, "\n")), &u))
		return u.Revision
	}
	require.EqualValues(t, 5, revision())

	w.set(false)
	rcv.advance(6)
	require.EqualValues(t, 6, revision(), "the write of 6 is under way, and blocked")
	for rev := uint64(7); rev <= 1000; rev++ {
		rcv.advance(rev) // never waits for the blocked subscriber
	}
	w.set(true)
	require.EqualValues(t, 1000, revision(), "after the blocked write, the newest revision")
	select {
	case line := <-w.arrived:
		t.Fatalf("the stream sent %q after the newest revision", line)
	default:
	}
}

func FuzzDecodeInstalledUpdate(f *testing.F) {
	f.Add(appendInstalledUpdate(nil, 11, 5)[:len(appendInstalledUpdate(nil, 11, 5))-1])
	f.Add([]byte(`{"type":"installed_revision","incarnation":18446744073709551615,"revision":18446744073709551615}`))
	f.Add([]byte(`{"type":"installed_revision","incarnation":0,"revision":1}`))
	f.Add([]byte(`{"type":"installed_revision","incarnation":1,"revision":-1}`))
	f.Add([]byte(`{"type":"installed_revision","incarnation":1} {}`))
	f.Add([]byte(`{"type":"installed_revision","incarnation":1,"node":"n1"}`))
	f.Add([]byte(`{"type":"domain_clock_progress","incarnation":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"type":"installed_revision","incarnation":1,"revision":1` + strings.Repeat(" ", MaxInstalledUpdateBytes) + `}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := DecodeInstalledUpdate(b)
		if err != nil {
			require.ErrorIs(t, err, ErrBadRequest)
			return
		}
		require.Less(t, len(b), MaxInstalledUpdateBytes)
		require.Equal(t, InstalledType, u.Type)
		require.NotZero(t, u.Incarnation)
		// What decodes re-encodes to a line that decodes to the same.
		line := appendInstalledUpdate(nil, u.Incarnation, u.Revision)
		require.Less(t, len(line), MaxInstalledUpdateBytes, "every update the handler writes fits a line")
		again, err := DecodeInstalledUpdate(line[:len(line)-1])
		require.NoError(t, err)
		require.Equal(t, u, again)
	})
}
