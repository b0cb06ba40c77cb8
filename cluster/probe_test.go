package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/internal/testpki"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
)

// probeMember is member n1 as Start builds it from a Config filled by
// withDefaults (newMember), on a fake clock, with the progress delivery
// and installed streams its verdicts notify, and without a node.
type probeMember struct {
	*Member
	ca *testpki.Authority
}

func newProbeMember(t *testing.T, fake *timesource.Fake) probeMember {
	t.Helper()
	ca := testpki.New(t)
	cfg, err := Config{Node: "n1", Material: ca.Node("n1", "127.0.0.1"), RaftAddr: "127.0.0.1:0",
		APIAddr: "127.0.0.1:1", Bootstrap: true, TimeSource: fake}.withDefaults()
	require.NoError(t, err)
	m := newMember(cfg)
	none := func() []interconnect.Peer { return nil }
	m.delivery = interconnect.NewDelivery(interconnect.DeliveryConfig{Client: m.client, Source: fake, Peers: none,
		Required: func(clockrt.ProgressReport) (uint64, bool) { return 0, false }})
	m.watch = interconnect.NewInstalledWatch(interconnect.InstalledWatchConfig{Client: m.client, Source: fake, Peers: none})
	t.Cleanup(func() {
		m.cancel()
		m.wg.Wait()
		m.delivery.Close()
		m.watch.Close()
		m.transport.CloseIdleConnections()
	})
	return probeMember{Member: m, ca: ca}
}

// statusPeer plays n2's status endpoint. Each request takes the next
// answer of its script ("fail": 503, "hang": held until the request ends,
// "healthy": n2's status), reports its attempt on seen first, and runs
// during (gossip arriving while the attempt is in flight).
type statusPeer struct {
	script []string
	seen   chan int
	during func()

	mu sync.Mutex
	n  int // requests so far
}

func (p *statusPeer) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *statusPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != interconnect.PathStatus {
		http.NotFound(w, r)
		return
	}
	p.mu.Lock()
	p.n++
	attempt := p.n
	p.mu.Unlock()
	p.seen <- attempt
	p.during()
	answer := "fail"
	if attempt <= len(p.script) {
		answer = p.script[attempt-1]
	}
	switch answer {
	case "hang":
		<-r.Context().Done()
	case "healthy":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(interconnect.Status{Node: "n2", Incarnation: 20, AdvertisedRevision: 4, Healthy: true})
	default:
		http.Error(w, "stopped", http.StatusServiceUnavailable)
	}
}

// TestProbeFinishesItsAttemptsDespiteGossip holds that a health probe
// makes its bounded attempts to the end whatever gossip reports while they
// run: gossip flips between dead and live during every attempt and every
// wait between two, and ends saying live. A node that fails every attempt
// is then unavailable although gossip calls it alive and a healthy
// observation of it was fresh when the probe began; one that answers on
// the last attempt is available.
func TestProbeFinishesItsAttemptsDespiteGossip(t *testing.T) {
	n2 := lifecycle.NodeIncarnation{Node: "n2", Incarnation: 20, Registered: 2}
	cases := []struct {
		name     string
		script   []string
		attempts int
		healthy  bool
	}{
		{"fails every attempt", []string{"fail", "fail", "fail"}, DefaultProbeAttempts, false},
		{"holds every attempt until its timeout", []string{"hang", "hang", "hang"}, DefaultProbeAttempts, false},
		{"answers on the last attempt", []string{"fail", "hang", "healthy"}, DefaultProbeAttempts, true},
		{"answers at once", []string{"healthy"}, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			fake := timesource.NewFake(0)
			pm := newProbeMember(t, fake)
			require.Equal(t, DefaultProbeAttempts, pm.cfg.ProbeAttempts)
			gossip := func() {
				pm.observe(catalog.Observation{Kind: catalog.HeartbeatFailed, Node: "n2"})
				pm.observe(catalog.Observation{Kind: catalog.HeartbeatResumed, Node: "n2"})
			}
			peer := &statusPeer{script: c.script, seen: make(chan int, 8), during: gossip}
			srv := httptest.NewUnstartedServer(peer)
			srv.TLS = pm.ca.Node("n2", "127.0.0.1").ServerConfig(pki.ServerOptions{Roles: []pki.Role{pki.RoleNode}})
			srv.EnableHTTP2 = true
			srv.StartTLS()
			defer srv.Close()

			// The last probe found n2 healthy: the observation is fresh.
			pm.avail.ObserveHealth("n2", 20, true)
			pm.probing["n2"] = true // as probeLoop marks a probe it starts
			pm.wg.Add(1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				pm.probe("n2", srv.Listener.Addr().String())
			}()
			for attempt := 1; attempt <= c.attempts; attempt++ {
				select {
				case got := <-peer.seen:
					require.Equal(t, attempt, got)
				case <-ctx.Done():
					t.Fatalf("attempt %d never reached the peer", attempt)
				}
				if c.script[attempt-1] == "hang" {
					require.NoError(t, fake.BlockUntilDue(ctx, DefaultProbeTimeout), "the attempt is bounded on the member's clock")
					fake.Advance(DefaultProbeTimeout)
				}
				if attempt == c.attempts {
					break
				}
				require.NoError(t, fake.BlockUntilDue(ctx, probeRetryGap), "attempt %d failed: the probe waits before the next", attempt)
				gossip()
				fake.Advance(probeRetryGap)
			}
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the probe did not finish")
			}
			require.Len(t, peer.seen, 0, "the probe made exactly its attempts")
			require.Equal(t, c.attempts, peer.requests())

			live, seen := GossipVerdict(pm.Member, "n2")
			require.True(t, seen && live, "gossip calls n2 alive")
			pm.statusMu.Lock()
			res, probing := pm.statuses["n2"], pm.probing["n2"]
			pm.statusMu.Unlock()
			require.False(t, probing)
			require.Equal(t, c.healthy, res.healthy)
			require.Equal(t, c.healthy, pm.avail.Live(n2), "the probe's verdict, not gossip's, decides")
		})
	}
}

// TestStaleHealthyObservationHandsTheVerdictToGossip holds that a healthy
// observation does not keep a node eligible past the node-unavailability
// interval, one second with the member's defaults: a node gossip calls
// dead stays available while its healthy observation is fresh, and the
// probe loop's verdict check that finds the observation stale makes the
// node unavailable and wakes the leader's reconciliation, with nothing new
// observed.
func TestStaleHealthyObservationHandsTheVerdictToGossip(t *testing.T) {
	const interval = time.Second // the documented default, not the constant
	fake := timesource.NewFake(0)
	pm := newProbeMember(t, fake)
	s := lifecycle.NewState()
	for i, name := range []string{"n1", "n2"} {
		r := s.Apply(lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
			Name: name, Incarnation: uint64(10 + i), RaftID: name, RaftAddr: "r", APIAddr: "a"}})
		require.NoError(t, r.Err())
	}
	names := func() []string {
		var out []string
		for _, ni := range pm.avail.Available(s) {
			out = append(out, ni.Node)
		}
		return out
	}
	signalled := func() bool {
		select {
		case <-pm.availChanged:
			return true
		default:
			return false
		}
	}

	pm.observe(catalog.Observation{Kind: catalog.HeartbeatFailed, Node: "n2"})
	pm.avail.ObserveHealth("n2", 11, true)
	pm.checkVerdicts(s)
	signalled() // the observations themselves signalled
	require.Equal(t, []string{"n1", "n2"}, names(), "a fresh healthy observation keeps n2 through the gossip loss")

	fake.Advance(interval - 1)
	pm.checkVerdicts(s)
	require.False(t, signalled(), "nothing changed before the interval passed")
	require.Equal(t, []string{"n1", "n2"}, names())

	fake.Advance(1)
	pm.checkVerdicts(s)
	require.True(t, signalled(), "the stale observation wakes the leader's reconciliation")
	require.Equal(t, []string{"n1"}, names(), "past the interval gossip decides")
}
