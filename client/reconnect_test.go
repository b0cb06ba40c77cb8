package client

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// notices collects a client's notices.
type notices chan Notice

func (n notices) notify(x Notice) {
	select {
	case n <- x:
	default:
	}
}

func (n notices) next(t testing.TB, kind NoticeKind) Notice {
	t.Helper()
	ctx := ctxT(t)
	for {
		select {
		case x := <-n:
			if x.Kind == kind {
				return x
			}
		case <-ctx.Done():
			t.Fatalf("no notice of kind %d", kind)
		}
	}
}

func TestReconnectRestoresFollowedClocks(t *testing.T) {
	e := newEnv(t, "")
	ns := make(notices, 64)
	c := e.dial(Config{TimeSource: timesource.NewFake(0), Notify: ns.notify})
	exec(t, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; CREATE DOMAIN other; USE prod; START AT NOW; ATTACH DOMAIN CLOCK; USE other;")
	first := e.event(c, "prod", follow.EventTick).Frame()
	require.Equal(t, uint64(1), first.Tick.ID, "the first event is the generation's first tick")

	e.srv.CloseSessions()
	require.Error(t, ns.next(t, Interrupted).Err)
	require.Equal(t, "n1", ns.next(t, Reconnected).Node)
	require.Equal(t, "prod", ns.next(t, Restored).Domain)
	f := nextFrame(t, c)
	for f.Kind == wire.FrameTick && f.Tick.ID <= first.Tick.ID {
		f = nextFrame(t, c) // a tick of the old session read late
	}
	require.Equal(t, wire.FrameState, f.Kind, "the restored attachment reports its clock")
	require.Equal(t, clock.Paced, f.Clock.State)
	require.Equal(t, uint64(1), f.Clock.Generation)
	exec(t, c, "LIST DOMAINS;") // runs only once the restoration is done
	require.Equal(t, "other", c.ActiveDomain(), "the active domain is restored after the clocks")
	// The restored clock kept tick 1, delivered anew by the new session,
	// so the next event is the next tick.
	next := e.advanceTick(c, "prod", time.Second, 2)
	require.Equal(t, uint64(1), next.Clock.Tick.Generation)
	require.Equal(t, []string{"prod"}, c.Followed())
	exec(t, c, "USE prod; DETACH DOMAIN CLOCK;")
}

func TestReconnectBackoffAndRemovedDomain(t *testing.T) {
	e := newEnv(t, "")
	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	c := e.dial(Config{TimeSource: cfake, Notify: ns.notify})
	exec(t, c, "CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 0s; USE prod; ATTACH DOMAIN CLOCK;")
	addr := e.url[len("https://"):]

	require.NoError(t, e.srv.Close())
	ns.next(t, Interrupted)
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		wait := nextTimer(t, cfake)
		require.Equal(t, want, wait, "reconnect waits one second, doubling")
		cfake.Advance(wait)
	}
	wait := nextTimer(t, cfake)
	require.Equal(t, 8*time.Second, wait)
	// The domain goes away while the client is disconnected.
	local := session.New(e.node, session.Options{Logger: quietLogger()})
	_, err := local.ExecText(ctxT(t), "DROP DOMAIN prod;")
	require.NoError(t, err)
	require.NoError(t, local.Close())

	srv, err := server.New(server.Config{Node: e.node, TLS: e.auth.node.ServerConfig(pki.ServerOptions{}), Logger: quietLogger()})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(ln)
	}()
	defer func() {
		require.NoError(t, c.Close())
		require.NoError(t, srv.Close())
		wg.Wait()
	}()
	cfake.Advance(wait)
	ns.next(t, Reconnected)
	f := nextFrame(t, c)
	require.Equal(t, wire.FrameEnd, f.Kind)
	require.Equal(t, wire.DomainRemoved, f.Reason, "a restoration refused as not found ends the attachment")
	require.Empty(t, c.Followed())
}

// scripted is a session protocol server that refuses the first refusals
// restorations of an attach and drops a session on demand.
type scripted struct {
	mu       sync.Mutex
	attaches int
	refusals int // attaches after the first one to refuse
	silent   int // the attach of this number is never answered; 0 none
	drop     chan struct{}
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	var mu sync.Mutex
	write := func(m wire.ServerMessage) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m)
		_ = rc.Flush()
	}
	write(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: "fake"})
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
		for {
			l, err := lr.Next()
			if err != nil {
				return
			}
			select {
			case lines <- append([]byte(nil), l...):
			case <-r.Context().Done():
				return
			}
		}
	}()
	active := ""
	for {
		select {
		case <-s.drop:
			return
		case <-r.Context().Done():
			return
		case l, ok := <-lines:
			if !ok {
				return
			}
			var m wire.ClientMessage
			if json.Unmarshal(l, &m) != nil || m.Type != wire.TypeExec {
				continue
			}
			switch m.Text {
			case "USE prod;":
				active = "prod"
				write(wire.ServerMessage{Type: wire.TypeReply, ID: m.ID, Result: &wire.EncodedResult{Statement: m.Text, Message: "ok", Domain: "prod"}, State: &wire.SessionState{Active: active}})
			case "ATTACH DOMAIN CLOCK;":
				s.mu.Lock()
				s.attaches++
				refuse := s.attaches > 1 && s.attaches <= 1+s.refusals
				silent := s.attaches == s.silent
				s.mu.Unlock()
				if silent {
					continue
				}
				if refuse {
					write(wire.ServerMessage{Type: wire.TypeError, ID: m.ID, Error: &wire.Error{Line: 1, Column: 1, Code: "clock_unavailable", Message: "not yet"}, State: &wire.SessionState{Active: active}})
					continue
				}
				write(wire.ServerMessage{Type: wire.TypeReply, ID: m.ID, Result: &wire.EncodedResult{
					Statement: m.Text, Message: "attached", Domain: "prod", Attachment: uint64(s.attaches),
					Clock: wire.AppendObserved(nil, clock.Observed{Generation: 3, State: clock.Stopped}),
				}, State: &wire.SessionState{Active: active}})
			case "DETACH DOMAIN CLOCK;":
				write(wire.ServerMessage{Type: wire.TypeError, ID: m.ID, Error: &wire.Error{Line: 1, Column: 1, Code: "not_attached", Message: "session does not follow the domain clock"}, State: &wire.SessionState{Active: active}})
			default:
				write(wire.ServerMessage{Type: wire.TypeError, ID: m.ID, Error: &wire.Error{Line: 1, Column: 1, Code: "syntax", Message: "unexpected"}})
			}
		}
	}
}

func TestRefusedRestorationBackoff(t *testing.T) {
	sc := &scripted{refusals: 7, drop: make(chan struct{}, 1)}
	url := testserve.H2C(t, sc)

	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: cfake, Notify: ns.notify, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	exec(t, c, "USE prod; ATTACH DOMAIN CLOCK;")
	sc.drop <- struct{}{} // ends the session from the server's side
	ns.next(t, Interrupted)
	ns.next(t, Reconnected)
	for _, want := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		n := ns.next(t, RestoreRefused)
		require.Equal(t, "prod", n.Domain)
		require.Equal(t, want*time.Second, n.Retry, "a refused restoration waits one second, doubling to thirty")
		require.Equal(t, want*time.Second, nextTimer(t, cfake))
		cfake.Advance(want * time.Second)
	}
	require.Equal(t, "prod", ns.next(t, Restored).Domain)
	f := nextFrame(t, c)
	require.Equal(t, wire.FrameState, f.Kind)
	require.Equal(t, uint64(3), f.Clock.Generation)
	require.Equal(t, uint64(9), f.Attachment)
}

// nextTimer waits until the client has armed a timer and returns the time
// until the earliest one falls due. A timer re-armed in between (a wake-up
// that recomputes the same deadline) is waited for again.
func nextTimer(t testing.TB, f *timesource.Fake) time.Duration {
	t.Helper()
	for {
		require.NoError(t, f.BlockUntil(ctxT(t), 1))
		if d, ok := f.Next(); ok {
			return d
		}
	}
}

func TestDetachDuringPendingRestoration(t *testing.T) {
	sc := &scripted{refusals: 100, drop: make(chan struct{}, 1)}
	url := testserve.H2C(t, sc)
	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: cfake, Notify: ns.notify, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	exec(t, c, "USE prod; ATTACH DOMAIN CLOCK;")
	sc.drop <- struct{}{}
	ns.next(t, RestoreRefused)
	res := exec(t, c, "DETACH DOMAIN CLOCK;")
	require.Contains(t, res[0].Message, "stopped following")
	require.Empty(t, c.Followed())
	_, err = c.ExecText(ctxT(t), "DETACH DOMAIN CLOCK;")
	require.ErrorIs(t, err, session.ErrNotAttached, "a second detach finds nothing followed")
	require.Zero(t, c.Pending())
}

func (s *scripted) attachCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attaches
}

func TestRefusedRestorationBackoffStartsAgainOnEachSession(t *testing.T) {
	sc := &scripted{refusals: 3, drop: make(chan struct{}, 1)}
	url := testserve.H2C(t, sc)
	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: cfake, Notify: ns.notify, Logger: quietLogger()})
	require.NoError(t, err)
	defer c.Close()
	exec(t, c, "USE prod; ATTACH DOMAIN CLOCK;")
	sc.drop <- struct{}{}
	ns.next(t, Interrupted)
	require.Equal(t, time.Second, ns.next(t, RestoreRefused).Retry)
	require.Equal(t, time.Second, nextTimer(t, cfake))
	cfake.Advance(time.Second)
	require.Equal(t, 2*time.Second, ns.next(t, RestoreRefused).Retry, "the wait doubles on the same session")

	// The session ends while the restoration waits: the next session
	// starts again from one second.
	sc.drop <- struct{}{}
	ns.next(t, Interrupted)
	ns.next(t, Reconnected)
	require.Equal(t, time.Second, ns.next(t, RestoreRefused).Retry, "each new session starts again from one second")
	require.Equal(t, time.Second, nextTimer(t, cfake))
	cfake.Advance(time.Second)
	require.Equal(t, "prod", ns.next(t, Restored).Domain)
}

func TestUnansweredRestorationEndsTheSession(t *testing.T) {
	// The first restoration (the second attach) is never answered.
	sc := &scripted{silent: 2, drop: make(chan struct{}, 1)}
	url := testserve.H2C(t, sc)
	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	const timeout = 7 * time.Second
	c, err := Dial(ctxT(t), Config{URLs: []string{url}, TimeSource: cfake, Notify: ns.notify, Logger: quietLogger(), RequestTimeout: timeout})
	require.NoError(t, err)
	defer c.Close()
	exec(t, c, "USE prod; ATTACH DOMAIN CLOCK;")
	sc.drop <- struct{}{}
	ns.next(t, Interrupted)
	ns.next(t, Reconnected)
	// Once the server holds the unanswered attach, its request's timer is
	// the one armed.
	ctx := ctxT(t)
	for sc.attachCount() < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("the restoration's attach did not arrive")
		case <-time.After(time.Millisecond):
		}
	}
	require.Equal(t, timeout, nextTimer(t, cfake), "the restoration waits the request timeout for its answer")
	cfake.Advance(timeout - 1)
	select {
	case n := <-ns:
		t.Fatalf("notice %v before the request timeout passed", n)
	default:
	}
	cfake.Advance(1)
	// That session ends; the next one attaches the clock again.
	ns.next(t, Interrupted)
	for {
		n := ns.next(t, Restored)
		if n.Domain == "prod" {
			break
		}
	}
	f := nextFrame(t, c)
	require.Equal(t, wire.FrameState, f.Kind)
	require.Equal(t, uint64(3), f.Attachment, "the clock is held by the third attach, on the third session")
}

// TestNodeShutdownEndsAttachmentNotFollowing: a node draining for a
// graceful shutdown ends each attachment with a NodeShutdown end frame and
// then the session; the client reports the frame, keeps following the
// clock and reports the session's end as an interruption.
func TestNodeShutdownEndsAttachmentNotFollowing(t *testing.T) {
	e := newEnv(t, "")
	ns := make(notices, 64)
	cfake := timesource.NewFake(0)
	c := e.dial(Config{TimeSource: cfake, Notify: ns.notify})
	exec(t, c, "CREATE DOMAIN prod; USE prod; ATTACH DOMAIN CLOCK;")

	drained := make(chan error, 1)
	go func() { drained <- e.srv.Drain(ctxT(t)) }()
	f := nextFrame(t, c)
	require.Equal(t, wire.FrameEnd, f.Kind)
	require.Equal(t, wire.NodeShutdown, f.Reason)
	require.Equal(t, []string{"prod"}, c.Followed(), "the clock is still followed")
	ns.next(t, Interrupted)
	require.NoError(t, <-drained)
	require.Equal(t, []string{"prod"}, c.Followed())
}
