package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/lifecycle"
)

// probeResult is the outcome of one probe of a member's status, after its
// bounded attempts.
type probeResult struct {
	status  interconnect.Status
	healthy bool
}

// probeLoop starts one bounded probe of every other registered member each
// ProbeInterval, skipping a member whose previous probe is still running.
func (m *Member) probeLoop() {
	defer m.wg.Done()
	t := m.src.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C():
		}
		s := m.node.CatalogState()
		m.checkVerdicts(s)
		for _, nd := range s.Nodes() {
			if nd.Name == m.cfg.Node {
				continue
			}
			m.statusMu.Lock()
			busy := m.probing[nd.Name]
			m.probing[nd.Name] = true
			m.statusMu.Unlock()
			if busy {
				continue
			}
			m.wg.Add(1)
			go m.probe(nd.Name, nd.APIAddr)
		}
		t.Reset(m.cfg.ProbeInterval)
	}
}

// checkVerdicts reports a change of the effectively available set that no
// observation announced: a health observation that went stale hands the
// verdict back to gossip with nothing new observed. It runs on probeLoop,
// which owns lastVerdicts.
func (m *Member) checkVerdicts(s *lifecycle.State) {
	var b strings.Builder
	for _, ni := range m.avail.Available(s) {
		fmt.Fprintf(&b, "%s#%d,", ni.Node, ni.Incarnation)
	}
	if key := b.String(); key != m.lastVerdicts {
		if m.lastVerdicts != "" {
			m.availabilityChanged()
		}
		m.lastVerdicts = key
	}
}

// probe makes up to ProbeAttempts attempts to read the member's status and
// records the verdict. It finishes its attempts whatever gossip reports
// meanwhile, so a stopped member is excluded even while a stale healthy
// observation would keep it.
func (m *Member) probe(name, addr string) {
	defer m.wg.Done()
	var res probeResult
	for attempt := 0; attempt < m.cfg.ProbeAttempts; attempt++ {
		if attempt > 0 && !m.wait(probeRetryGap) {
			break
		}
		ctx, cancel := timesource.WithTimeout(m.ctx, m.src, m.cfg.ProbeTimeout)
		st, err := m.client.Status(ctx, addr)
		cancel()
		if err == nil && st.Node == name && st.Healthy {
			res = probeResult{status: st, healthy: true}
			break
		}
	}
	m.statusMu.Lock()
	prev := m.statuses[name]
	m.statuses[name] = res
	delete(m.probing, name)
	m.statusMu.Unlock()
	if m.ctx.Err() != nil {
		return
	}
	m.avail.ObserveHealth(name, res.status.Incarnation, res.healthy)
	if prev.status.AdvertisedRevision != res.status.AdvertisedRevision || prev.healthy != res.healthy {
		m.delivery.PeersChanged()
	}
}

// wait waits d on the member's clock, false when the member closes first.
func (m *Member) wait(d time.Duration) bool {
	t := m.src.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-m.ctx.Done():
		return false
	}
}
