package interconnect

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

func TestProgressFencing(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	var m Metrics
	srv := serve(t, p, NewHandler(rcv, &m, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	other := authority
	other.Revision--
	stale := report(2)
	stale.Generation = 1
	foreign := report(2)
	foreign.Authority.Incarnation = 8
	cases := []struct {
		name    string
		from    *pki.Material
		rep     clockrt.ProgressReport
		outcome string
	}{
		{"the authority's tick", p.n1, report(3), OutcomeAccepted},
		{"the same tick again", p.n1, report(3), OutcomeIgnored},
		{"an older tick", p.n1, report(2), OutcomeIgnored},
		{"signed by a node that is not the authority", p.n3, report(4), OutcomeRefused},
		{"an old generation", p.n1, stale, OutcomeRefused},
		{"an old authority revision", p.n1, func() clockrt.ProgressReport { r := report(4); r.Authority = other; return r }(), OutcomeRefused},
		{"a previous incarnation of the authority", p.n1, foreign, OutcomeRefused},
		{"tick zero", p.n1, report(0), OutcomeRefused},
		{"a domain the receiver lacks", p.n1, func() clockrt.ProgressReport { r := report(4); r.Domain = "nope"; return r }(), OutcomeRefused},
		{"tick 1e9, boundary 0, UTC ten years ahead", p.n1, func() clockrt.ProgressReport {
			r := report(1_000_000_000)
			r.Boundary, r.AuthorityUTC = 0, issued.Add(10*365*24*time.Hour).UnixNano()
			return r
		}(), OutcomeRefused},
		{"a mis-aligned boundary", p.n1, func() clockrt.ProgressReport { r := report(4); r.Boundary++; return r }(), OutcomeRefused},
		{"the next tick", p.n1, report(4), OutcomeAccepted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply, err := clientFor(t, c.from).Progress(ctx, addrOf(srv), c.rep)
			require.NoError(t, err)
			require.Equal(t, c.outcome, reply.Outcome, reply.Reason)
			require.Equal(t, uint64(11), reply.Incarnation)
			require.Equal(t, uint64(5), reply.AdvertisedRevision)
		})
	}
	require.Equal(t, uint64(4), rcv.reg.Progress("d").ID, "only the authority's ticks were published")
	s := m.Snapshot()
	require.Equal(t, uint64(2), s.ProgressAccepted)
	require.Equal(t, uint64(2), s.ProgressIgnored)
	require.Equal(t, uint64(6), s.ProgressRefused)
	require.Equal(t, uint64(2), s.ProgressImplausible)
}

// failureReport is the last report of the authority's producer after its
// projection failed, repeating tick id (0: none was emitted).
func failureReport(id uint64) clockrt.ProgressReport {
	rep := clockrt.ProgressReport{Domain: "d", Generation: 2, Authority: authority, Period: uint64(time.Second)}
	if id != 0 {
		rep = report(id)
	}
	rep.Failure = &clockrt.ClockFailure{Domain: "d", Generation: 2, Op: "project", Code: "clock_overflow",
		Cause:   "clock: project: result of wall 1 leaves signed unix nanoseconds",
		Message: `produce domain "d" generation 2: domain clock projection falls outside the signed Unix-nanosecond range`}
	return rep
}

func TestProgressFailureFencing(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	srv := serve(t, p, NewHandler(rcv, nil, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stale := failureReport(0)
	stale.Generation, stale.Failure.Generation = 1, 1
	cases := []struct {
		name    string
		from    *pki.Material
		rep     clockrt.ProgressReport
		outcome string
	}{
		{"signed by a node that is not the authority", p.n3, failureReport(0), OutcomeRefused},
		{"an old generation", p.n1, stale, OutcomeRefused},
		{"the authority's failure", p.n1, failureReport(3), OutcomeAccepted},
		{"the same failure again", p.n1, failureReport(3), OutcomeIgnored},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply, err := clientFor(t, c.from).Progress(ctx, addrOf(srv), c.rep)
			require.NoError(t, err)
			require.Equal(t, c.outcome, reply.Outcome, reply.Reason)
		})
	}
	got := rcv.reg.ClockFailure("d")
	require.Equal(t, failureReport(3).Failure, got, "the failure travels whole")
	require.ErrorIs(t, got, clockrt.ErrClockOverflow)
	require.Equal(t, uint64(3), rcv.reg.Progress("d").ID, "its tick is accepted with it")
}

func TestHandlerRefusesWhatItCannotTrust(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	srv := serve(t, p, NewHandler(rcv, nil, nil))
	good, err := json.Marshal(ProgressOf(report(1)))
	require.NoError(t, err)
	anon := (&pki.Material{Pool: p.n1.Pool}).Transport()
	defer anon.CloseIdleConnections()

	cases := []struct {
		name   string
		rt     http.RoundTripper
		method string
		path   string
		body   string
		status int
	}{
		{"no client certificate", anon, http.MethodPost, PathProgress, string(good), http.StatusForbidden},
		{"a client certificate is not a node", p.alice.Transport(), http.MethodPost, PathProgress, string(good), http.StatusForbidden},
		{"a node certificate", p.n1.Transport(), http.MethodPost, PathProgress, string(good), http.StatusOK},
		{"unknown field", p.n1.Transport(), http.MethodPost, PathProgress, `{"type":"domain_clock_progress","domain":"d","from":"n1"}`, http.StatusBadRequest},
		{"wrong type", p.n1.Transport(), http.MethodPost, PathProgress, `{"type":"tick","domain":"d"}`, http.StatusBadRequest},
		{"no domain", p.n1.Transport(), http.MethodPost, PathProgress, `{"type":"domain_clock_progress"}`, http.StatusBadRequest},
		{"trailing data", p.n1.Transport(), http.MethodPost, PathProgress, string(good) + `{}`, http.StatusBadRequest},
		{"not JSON", p.n1.Transport(), http.MethodPost, PathProgress, `tick`, http.StatusBadRequest},
		{"one byte over the cap", p.n1.Transport(), http.MethodPost, PathProgress, strings.Repeat(" ", MaxBodyBytes-len(good)+1) + string(good), http.StatusRequestEntityTooLarge},
		{"exactly the cap", p.n1.Transport(), http.MethodPost, PathProgress, strings.Repeat(" ", MaxBodyBytes-len(good)) + string(good), http.StatusOK},
		{"GET progress", p.n1.Transport(), http.MethodGet, PathProgress, "", http.StatusMethodNotAllowed},
		{"unknown path", p.n1.Transport(), http.MethodGet, "/v1/peer/nothing", "", http.StatusNotFound},
		{"join as another node", p.n1.Transport(), http.MethodPost, PathJoin, `{"name":"n9","server_id":"x","raft_addr":"127.0.0.1:1"}`, http.StatusForbidden},
		{"join as itself", p.n1.Transport(), http.MethodPost, PathJoin, `{"name":"n1","server_id":"x","raft_addr":"127.0.0.1:1"}`, http.StatusOK},
		{"propose garbage", p.n1.Transport(), http.MethodPost, PathPropose, `{"command":"AAAA"}`, http.StatusBadRequest},
		{"status", p.n3.Transport(), http.MethodGet, PathStatus, "", http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if tr, ok := c.rt.(*http.Transport); ok {
				defer tr.CloseIdleConnections()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var body io.Reader
			if c.body != "" {
				body = bytes.NewReader([]byte(c.body))
			}
			req, err := http.NewRequestWithContext(ctx, c.method, "https://"+addrOf(srv)+c.path, body)
			require.NoError(t, err)
			resp, err := (&http.Client{Transport: c.rt}).Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			require.Equal(t, c.status, resp.StatusCode)
			require.Equal(t, 2, resp.ProtoMajor, "peer traffic is HTTP/2")
		})
	}
	// The refused reports never reached the clockrt.
	for _, rep := range rcv.seen() {
		require.Equal(t, "d", rep.Domain)
	}
}

func TestClientTranslatesRemoteErrors(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	srv := serve(t, p, NewHandler(rcv, nil, nil))
	c := clientFor(t, p.n1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: "d"}}

	_, err := c.Propose(ctx, addrOf(srv), true, cmd)
	require.ErrorIs(t, err, catalog.ErrNotLeader)
	var re *wire.RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "abc", re.Leader)

	for _, e := range []error{catalog.ErrLeadershipUnconfirmed, catalog.ErrOutcomeUnknown, catalog.ErrTimeout, catalog.ErrShutdown} {
		rcv.propose = func(lifecycle.Command) (lifecycle.Result, error) { return lifecycle.Result{}, e }
		_, err := c.Propose(ctx, addrOf(srv), true, cmd)
		require.ErrorIs(t, err, e)
	}
	// A refused command is not an error: its typed failure travels in the
	// result, as it does locally.
	refusal := &lifecycle.Error{Code: lifecycle.CodeDomainNotFound, Domain: "d", Message: "domain 'd' does not exist"}
	rcv.propose = func(got lifecycle.Command) (lifecycle.Result, error) {
		require.Equal(t, cmd, got)
		return lifecycle.Result{Revision: 9, Failure: refusal}, nil
	}
	res, err := c.Propose(ctx, addrOf(srv), true, cmd)
	require.NoError(t, err)
	require.ErrorIs(t, res.Err(), lifecycle.ErrDomainNotFound)
	require.Equal(t, refusal.Error(), res.Err().Error())

	require.NoError(t, c.Remove(ctx, addrOf(srv), false, "n3"))
	require.ErrorIs(t, c.Remove(ctx, addrOf(srv), false, "ghost"), lifecycle.ErrUnknownNode)
	require.NoError(t, c.Join(ctx, addrOf(srv), false, JoinRequest{Name: "n1", ServerID: "s", RaftAddr: "127.0.0.1:9"}))
	st, err := c.Status(ctx, addrOf(srv))
	require.NoError(t, err)
	require.Equal(t, "n2", st.Node)

	// A peer that does not answer is unreachable, and an unknown outcome
	// for a forwarded command.
	srv.Close()
	_, err = c.Status(ctx, addrOf(srv))
	require.ErrorIs(t, err, ErrUnreachable)
	_, err = c.Propose(ctx, addrOf(srv), true, cmd)
	require.ErrorIs(t, err, catalog.ErrOutcomeUnknown)
}

// TestAProposeCancelledByTheStoppingNodeIsRetryable: a leader whose
// process stops while it serves a forwarded command, before the command
// reached raft, answers that it is shutting down (which the forwarder
// retries through the next leader), not with a bare "context canceled"
// that would fail the statement.
func TestAProposeCancelledByTheStoppingNodeIsRetryable(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	base, stopping := context.WithCancel(context.Background())
	defer stopping()
	srv := httptest.NewUnstartedServer(NewHandler(rcv, nil, nil))
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.TLS = p.n2.ServerConfig(pki.ServerOptions{AllowNoClientCert: true})
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	rcv.proposeCtx = func(ctx context.Context, _ lifecycle.Command) (lifecycle.Result, error) {
		stopping() // the process stops while the command waits
		<-ctx.Done()
		return lifecycle.Result{}, ctx.Err()
	}
	c := clientFor(t, p.n1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Propose(ctx, addrOf(srv), true, lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: "d"}})
	require.ErrorIs(t, err, catalog.ErrShutdown)
	require.NotErrorIs(t, err, wire.ErrCanceled)
	require.ErrorContains(t, err, "the node is stopping")
}

func FuzzDecodeProgress(f *testing.F) {
	good, _ := json.Marshal(ProgressOf(report(1)))
	f.Add(good)
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d","tick":18446744073709551615,"boundary":-9223372036854775808}`))
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d"} {}`))
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d","extra":1}`))
	f.Add([]byte(`null`))
	failure, _ := json.Marshal(ProgressOf(failureReport(0)))
	f.Add(failure)
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d","failure":{"op":"project","code":"","cause":"","message":""}}`))
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d","failure":{"message":"m","extra":1}}`))
	f.Add([]byte(`{"type":"domain_clock_progress","domain":"d","failure":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProgress(b)
		if err != nil {
			require.ErrorIs(t, err, ErrBadRequest)
			return
		}
		require.Equal(t, ProgressType, p.Type)
		require.NotEmpty(t, p.Domain)
		if p.Failure != nil {
			require.NotEmpty(t, p.Failure.Message)
			require.Equal(t, p.Domain, p.Report().Failure.Domain)
			require.Equal(t, p.Generation, p.Report().Failure.Generation)
		}
		// What decodes re-encodes to a value that decodes to the same.
		again, err := json.Marshal(p)
		require.NoError(t, err)
		q, err := DecodeProgress(again)
		require.NoError(t, err)
		require.Equal(t, p, q)
		require.Equal(t, p, ProgressOf(p.Report()))
	})
}

func TestPeerAuthorization(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t)
	rcv.standings["n3"] = Standing{Member: true} // a member that does not vote
	rcv.propose = func(lifecycle.Command) (lifecycle.Result, error) { return lifecycle.Result{Revision: 9}, nil }
	var m Metrics
	srv := serve(t, p, NewHandler(rcv, &m, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stop := lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: "d"}}
	register := func(name, serverID string) lifecycle.Command {
		return lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
			Name: name, Incarnation: 1, RaftID: serverID, RaftAddr: "127.0.0.1:1", APIAddr: "127.0.0.1:2"}}
	}
	join := func(name string) JoinRequest {
		return JoinRequest{Name: name, ServerID: "s-" + name, RaftAddr: "127.0.0.1:1"}
	}
	cases := []struct {
		name      string
		from      *pki.Material
		call      func(c *Client) error
		forbidden bool
	}{
		{"a non-member forwards a join of another node", p.outsider, func(c *Client) error { return c.Join(ctx, addrOf(srv), true, join("n7")) }, true},
		{"a non-member forwards its own join", p.outsider, func(c *Client) error { return c.Join(ctx, addrOf(srv), true, join("n9")) }, true},
		{"a non-member removes a member, forwarded", p.outsider, func(c *Client) error { return c.Remove(ctx, addrOf(srv), true, "n2") }, true},
		{"a non-member removes a member", p.outsider, func(c *Client) error { return c.Remove(ctx, addrOf(srv), false, "n2") }, true},
		{"a non-member proposes, forwarded", p.outsider, func(c *Client) error { _, err := c.Propose(ctx, addrOf(srv), true, stop); return err }, true},
		{"a non-member proposes", p.outsider, func(c *Client) error { _, err := c.Propose(ctx, addrOf(srv), false, stop); return err }, true},
		{"a non-member reports progress", p.outsider, func(c *Client) error { _, err := c.Progress(ctx, addrOf(srv), report(1)); return err }, true},
		{"a non-member probes status", p.outsider, func(c *Client) error { _, err := c.Status(ctx, addrOf(srv)); return err }, true},
		{"a non-member waits for an installation", p.outsider, func(c *Client) error { _, err := c.Installed(ctx, addrOf(srv), 1); return err }, true},
		{"a non-member registers a server someone holds", p.outsider, func(c *Client) error {
			_, err := c.Propose(ctx, addrOf(srv), true, register("n9", "s-n1"))
			return err
		}, true},
		{"a member that does not vote forwards a join", p.n3, func(c *Client) error { return c.Join(ctx, addrOf(srv), true, join("n7")) }, true},
		{"a voter joins another node unforwarded", p.n2, func(c *Client) error { return c.Join(ctx, addrOf(srv), false, join("n7")) }, true},
		{"a member registers another node", p.n1, func(c *Client) error {
			_, err := c.Propose(ctx, addrOf(srv), true, register("n2", "s-fresh"))
			return err
		}, true},

		{"a node joins as itself", p.outsider, func(c *Client) error { return c.Join(ctx, addrOf(srv), false, join("n9")) }, false},
		{"a voter forwards a join", p.n1, func(c *Client) error { return c.Join(ctx, addrOf(srv), true, join("n8")) }, false},
		{"a joined node registers its server", p.outsider, func(c *Client) error {
			_, err := c.Propose(ctx, addrOf(srv), true, register("n9", "s-fresh"))
			return err
		}, false},
		{"a member proposes", p.n3, func(c *Client) error { _, err := c.Propose(ctx, addrOf(srv), true, stop); return err }, false},
		{"a member removes a member", p.n3, func(c *Client) error { return c.Remove(ctx, addrOf(srv), true, "n2") }, false},
		{"a member probes status", p.n3, func(c *Client) error { _, err := c.Status(ctx, addrOf(srv)); return err }, false},
		{"a member waits for an installed revision", p.n3, func(c *Client) error { _, err := c.Installed(ctx, addrOf(srv), 5); return err }, false},
	}
	forbidden := uint64(0)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call(clientFor(t, c.from))
			if !c.forbidden {
				require.NoError(t, err)
				return
			}
			forbidden++
			require.ErrorIs(t, err, ErrForbidden)
			var re *wire.RemoteError
			require.ErrorAs(t, err, &re)
			require.Equal(t, CodeForbidden, re.Code)
		})
	}
	// Only the authorized requests reached the backend.
	require.Equal(t, []JoinRequest{join("n9"), join("n8")}, rcv.joins)
	require.Equal(t, []string{"n2"}, rcv.removes)
	require.Equal(t, []lifecycle.Command{register("n9", "s-fresh"), stop}, rcv.proposed)
	require.Empty(t, rcv.seen(), "no report of a non-member reached the runtime")
	require.Equal(t, forbidden, m.Snapshot().Forbidden)
}

func TestInstalledWaits(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	p := newPKI(t)
	rcv := newReceiver(t) // has installed revision 5
	srv := serve(t, p, NewHandler(rcv, nil, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := clientFor(t, p.n1)

	for _, rev := range []uint64{4, 5} {
		reply, err := c.Installed(ctx, addrOf(srv), rev)
		require.NoError(t, err)
		require.Equal(t, InstalledReply{Installed: true, AdvertisedRevision: 5}, reply, "revision %d is installed already", rev)
	}

	// Revision 6 is not installed: the wait holds until it is, and a
	// caller holds at most its share of waits.
	replies := make(chan InstalledReply, MaxInstalledWaitsPerCaller)
	errs := make(chan error, MaxInstalledWaitsPerCaller)
	for range MaxInstalledWaitsPerCaller {
		go func() {
			reply, err := c.Installed(ctx, addrOf(srv), 6)
			replies <- reply
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return rcv.waits() == MaxInstalledWaitsPerCaller }, 10*time.Second, time.Millisecond)
	_, err := c.Installed(ctx, addrOf(srv), 6)
	require.ErrorIs(t, err, ErrBusy, "one wait past the caller's share is refused")
	// Another node has a share of its own; a wait cut short by its caller
	// answers nothing installed.
	short, stop := context.WithCancel(ctx)
	go func() {
		for rcv.waits() <= MaxInstalledWaitsPerCaller {
			time.Sleep(time.Millisecond)
		}
		stop()
	}()
	_, err = clientFor(t, p.n3).Installed(short, addrOf(srv), 6)
	require.ErrorIs(t, err, ErrUnreachable)

	rcv.mu.Lock()
	rcv.advertRv = 6
	rcv.mu.Unlock()
	close(rcv.installed)
	for range MaxInstalledWaitsPerCaller {
		require.NoError(t, <-errs)
		require.Equal(t, InstalledReply{Installed: true, AdvertisedRevision: 6}, <-replies)
	}
	_, err = c.Installed(ctx, addrOf(srv), 6)
	require.NoError(t, err, "the share is free again once the waits answered")
}
