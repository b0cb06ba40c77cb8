package interconnect

import "sync/atomic"

// Metrics counts the interconnect's progress traffic and its refusals. The zero value is
// ready; every field is safe for concurrent use.
type Metrics struct {
	// Sender side (Delivery).
	ProgressSent   atomic.Uint64 // requests that got a reply
	ProgressFailed atomic.Uint64 // requests that failed or timed out
	// Receiver side (Handler).
	ProgressAccepted atomic.Uint64 // published as the newest tick
	ProgressIgnored  atomic.Uint64 // current but not newer
	ProgressRefused  atomic.Uint64 // refused by the receiver's fence
	// ProgressImplausible counts reports that matched the fence but were
	// refused as implausible (clockrt.ErrImplausibleProgress); they are
	// not in ProgressRefused.
	ProgressImplausible atomic.Uint64
	// Forbidden counts requests refused because of who sent them: no
	// verified node certificate, or a caller the route's rule refuses.
	Forbidden atomic.Uint64
}

// MetricsSnapshot is a copy of Metrics at one moment.
type MetricsSnapshot struct {
	ProgressSent, ProgressFailed                       uint64
	ProgressAccepted, ProgressIgnored, ProgressRefused uint64
	ProgressImplausible, Forbidden                     uint64
}

// Snapshot copies the counters.
func (m *Metrics) Snapshot() MetricsSnapshot {
	return MetricsSnapshot{
		ProgressSent: m.ProgressSent.Load(), ProgressFailed: m.ProgressFailed.Load(),
		ProgressAccepted: m.ProgressAccepted.Load(), ProgressIgnored: m.ProgressIgnored.Load(), ProgressRefused: m.ProgressRefused.Load(),
		ProgressImplausible: m.ProgressImplausible.Load(), Forbidden: m.Forbidden.Load(),
	}
}
