package cluster

import (
	"context"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/interconnect"
)

// StandingOf is the peer handler's view of name's standing on m.
func StandingOf(m *Member, name string) (interconnect.Standing, error) {
	return backend{m}.Standing(name)
}

// GossipVerdict is m's latest gossip verdict on node name, and whether
// gossip has reported on it at all.
func GossipVerdict(m *Member, name string) (live, seen bool) {
	m.avail.mu.Lock()
	defer m.avail.mu.Unlock()
	live, seen = m.avail.gossip[name]
	return live, seen
}

// PeersLive reports whether m counts every other registered member live,
// and how many there are.
func PeersLive(m *Member) (int, bool) {
	peers := m.peers()
	for _, p := range peers {
		if !p.Live {
			return len(peers), false
		}
	}
	return len(peers), true
}

// InstalledStreamsUp reports whether m follows an installed stream, up
// under the registered incarnation, from every other live member.
func InstalledStreamsUp(m *Member) bool {
	for _, p := range m.peers() {
		if st := m.watch.Installed(p.Name); p.Live && (!st.Up || st.Incarnation != p.Incarnation) {
			return false
		}
	}
	return true
}

// StopInstalledStreams closes m's installed streams for good: from then
// on its statements ask every peer per statement.
func StopInstalledStreams(m *Member) { m.watch.Close() }

// SeeProgress makes hook see every report of m's producers before
// delivery does, on the producer's goroutine and under its context: a
// hook that blocks holds the producer as a slow hand-on would.
func SeeProgress(m *Member, hook func(context.Context, clockrt.ProgressReport)) {
	m.progressHook.Store(&hook)
}

// ProgressLanes returns how many progress delivery lanes of the domain
// run on m, retired ones included.
func ProgressLanes(m *Member, domain string) int { return m.delivery.LanesRunning(domain) }
