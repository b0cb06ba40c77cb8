package interconnect

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
)

var issued = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pkiSet is one CA with the materials tests use.
type pkiSet struct {
	ca                *pki.CA
	n1, n2, n3, alice *pki.Material
	outsider          *pki.Material // a node of the CA that is not a member
	stranger          *pki.Material // a node of another CA
}

func newPKI(t testing.TB) *pkiSet {
	t.Helper()
	a, other := testpki.New(t), testpki.New(t)
	return &pkiSet{ca: a.CA, n1: a.Node("n1", "127.0.0.1"), n2: a.Node("n2", "127.0.0.1"), n3: a.Node("n3", "127.0.0.1"),
		alice: a.Client("alice"), outsider: a.Node("n9", "127.0.0.1"), stranger: other.Node("n1", "127.0.0.1")}
}

// authority is the fence the receiver's installed domain "d" expects.
var authority = lifecycle.AuthorityFence{Node: "n1", Incarnation: 7, Revision: 3}

// receiver is a Backend over a real runtime registry with domain "d"
// installed paced under authority; it records what reaches it.
type receiver struct {
	reg *clockrt.Registry

	mu       sync.Mutex
	reports  []clockrt.ProgressReport
	joins    []JoinRequest
	removes  []string
	proposed []lifecycle.Command
	propose  func(lifecycle.Command) (lifecycle.Result, error)
	// proposeCtx, when set, answers instead of propose, with the
	// request's context.
	proposeCtx func(context.Context, lifecycle.Command) (lifecycle.Result, error)
	advertRv   uint64
	// installed is closed to let every installed wait answer advertRv;
	// waiting counts the waits in flight.
	installed chan struct{}
	waiting   int
	// advanced is closed and replaced by advance, for the installed
	// stream.
	advanced chan struct{}
	// standings is the committed membership as the receiver knows it;
	// free lists raft servers in its configuration that nobody claims.
	standings map[string]Standing
	free      map[string]bool
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	// The receiver's clock is an hour past the origin, so the reports of
	// the first ticks are plausible.
	reg := clockrt.NewRegistry(timesource.NewFake(issued.Add(time.Hour).UnixNano()))
	_, err := reg.Install("d", clockrt.Lifecycle{
		State: clockrt.StatePaced, Generation: 2, StartPoint: issued.UnixNano(),
		Mapping: clock.Mapping{WallStartedAt: issued.UnixNano(), LogicalStart: issued.UnixNano(), Rate: 1},
		Period:  uint64(time.Second), Authority: authority, Revision: 5,
	})
	require.NoError(t, err)
	return &receiver{reg: reg, advertRv: 5, installed: make(chan struct{}), advanced: make(chan struct{}),
		standings: map[string]Standing{"n1": {Member: true, Voter: true}, "n2": {Member: true, Voter: true}, "n3": {Member: true, Voter: true}},
		free:      map[string]bool{"s-fresh": true}}
}

func (r *receiver) Standing(name string) (Standing, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.standings[name], nil
}

func (r *receiver) Registrable(_ context.Context, _, serverID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.free[serverID] {
		return fmt.Errorf("raft server %q is not in the configuration", serverID)
	}
	return nil
}

func (r *receiver) AcceptProgress(from string, rep clockrt.ProgressReport) (bool, error) {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	return r.reg.AcceptProgress(from, rep)
}

func (r *receiver) Join(_ context.Context, forwarded bool, req JoinRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.joins = append(r.joins, req)
	return nil
}

func (r *receiver) Remove(_ context.Context, _ bool, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "ghost" {
		return lifecycle.ErrUnknownNode
	}
	r.removes = append(r.removes, name)
	return nil
}

func (r *receiver) Propose(ctx context.Context, _ bool, cmd lifecycle.Command) (lifecycle.Result, error) {
	r.mu.Lock()
	r.proposed = append(r.proposed, cmd)
	r.mu.Unlock()
	if r.proposeCtx != nil {
		return r.proposeCtx(ctx, cmd)
	}
	if r.propose != nil {
		return r.propose(cmd)
	}
	return lifecycle.Result{}, &catalog.NotLeaderError{Leader: "abc", LeaderAddress: "127.0.0.1:1"}
}

func (r *receiver) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Status{Node: "n2", Incarnation: 11, AdvertisedRevision: r.advertRv, Healthy: true}
}

func (r *receiver) WaitInstalled(ctx context.Context, rev uint64) (uint64, error) {
	r.mu.Lock()
	if r.advertRv >= rev {
		defer r.mu.Unlock()
		return r.advertRv, nil
	}
	r.waiting++
	r.mu.Unlock()
	defer func() { r.mu.Lock(); r.waiting--; r.mu.Unlock() }()
	select {
	case <-r.installed:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.advertRv, nil
}

func (r *receiver) InstalledRevision() (uint64, uint64, <-chan struct{}, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return 11, r.advertRv, r.advanced, nil
}

// advance makes rev the receiver's installed revision.
func (r *receiver) advance(rev uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advertRv = rev
	close(r.advanced)
	r.advanced = make(chan struct{})
}

func (r *receiver) waits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

func (r *receiver) seen() []clockrt.ProgressReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]clockrt.ProgressReport(nil), r.reports...)
}

// serve starts an HTTP/2 TLS server for h whose TLS admits any verified
// certificate and anonymous clients, so the handler's own checks are what
// a test exercises.
func serve(t testing.TB, p *pkiSet, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = p.n2.ServerConfig(pki.ServerOptions{AllowNoClientCert: true})
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func addrOf(srv *httptest.Server) string { return srv.Listener.Addr().String() }

// report is tick id of the installed domain under authority.
func report(id uint64) clockrt.ProgressReport {
	return clockrt.ProgressReport{Domain: "d", Generation: 2, Authority: authority, ID: id,
		Boundary: issued.UnixNano() + int64(id-1)*int64(time.Second), AuthorityUTC: issued.UnixNano() + int64(id), Period: uint64(time.Second)}
}

func clientFor(t testing.TB, m *pki.Material) *Client {
	t.Helper()
	tr := m.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	return NewClient(tr)
}
