package interconnect

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// heldGate holds every request until the test releases it, counting the
// requests in flight.
type heldGate struct {
	next    http.Handler
	release chan struct{}

	mu       sync.Mutex
	inflight int
	most     int
	requests int
}

func (g *heldGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.inflight++
	g.requests++
	g.most = max(g.most, g.inflight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inflight--
		g.mu.Unlock()
	}()
	select {
	case <-g.release:
		g.next.ServeHTTP(w, r)
	case <-r.Context().Done():
	}
}

func (g *heldGate) stats() (inflight, most, requests int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight, g.most, g.requests
}

// TestSpecSubquotaBoundsConcurrentAttempts holds the node-wide progress
// subquota: with one lane per domain each wanting a request at once, no
// more than MaxInFlight requests are in flight, and every lane still gets
// its turn as requests finish.
func TestSpecSubquotaBoundsConcurrentAttempts(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	const quota, domains = 2, 6
	p := newPKI(t)
	rcv := newReceiver(t)
	g := &heldGate{next: NewHandler(rcv, nil, nil), release: make(chan struct{})}
	addr := addrOf(serve(t, p, g))
	d := NewDelivery(DeliveryConfig{
		Client: clientFor(t, p.n1),
		Source: timesource.NewFake(issued.UnixNano()),
		Peers: func() []Peer {
			return []Peer{{Name: "n2", APIAddr: addr, Incarnation: 11, Live: true, Advertised: 5}}
		},
		Required: func(clockrt.ProgressReport) (uint64, bool) { return 5, true },
		// The request deadlines are on the fake clock, which the test
		// never advances: it releases every request itself.
		MaxInFlight: quota,
	})
	t.Cleanup(d.Close)

	for i := range domains {
		rep := report(1)
		rep.Domain = string(rune('a' + i))
		d.Publish(rep)
	}
	for done := 0; done < domains; done++ {
		want := min(quota, domains-done)
		// The released request has ended and the next lane's has started.
		waitFor(t, "requests up to the subquota", func() bool {
			in, _, requests := g.stats()
			return in == want && requests >= done+want
		})
		in, most, requests := g.stats()
		require.Equal(t, want, in)
		require.LessOrEqual(t, most, quota, "never more than the subquota in flight")
		require.Equal(t, done+want, requests, "a request waiting for the subquota is not sent")
		g.release <- struct{}{}
	}
	_, most, requests := g.stats()
	require.Equal(t, quota, most)
	require.Equal(t, domains, requests, "every domain's lane got its turn")
}

// TestSpecProgressWireCarriesTypedTimestamps holds the progress request's
// wire value: the fence, the tick id and two timestamps, the logical
// boundary and the authority's UTC observation, as signed Unix nanoseconds,
// and the period; nothing else, so no process-local monotonic instant
// travels. The value decodes to the report it was made from.
func TestSpecProgressWireCarriesTypedTimestamps(t *testing.T) {
	rep := report(7)
	data, err := json.Marshal(ProgressOf(rep))
	require.NoError(t, err)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &fields))
	require.Equal(t, []string{"authority", "authority_utc", "boundary", "domain", "generation", "period", "tick", "type"},
		slices.Sorted(maps.Keys(fields)))
	for name, want := range map[string]int64{"boundary": rep.Boundary, "authority_utc": rep.AuthorityUTC} {
		var got int64
		require.NoError(t, json.Unmarshal(fields[name], &got), "%s is an integer of nanoseconds", name)
		require.Equal(t, want, got, name)
	}
	var back Progress
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, rep, back.Report())
}
