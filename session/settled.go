package session

// Settled reports whether nothing is on its way to the reader of the
// session's stream: the fan-out of every attachment waits for a change
// that has not come (every tick it was handed is in its attachments'
// slots), no delivery task runs or is due to, the lane is empty, and the
// reader has finished with everything it took. handled is the number of
// entries the reader has taken from Next and finished with; Settled holds
// only once it equals the number Next has returned.
//
// It is for a driver of virtual time (nspl.Engine), and holds with an
// attachment only for a session on a timesource.Virtual, whose fan-outs
// record their waits. The driver reads the node first (nspl.Engine's
// settled), so every part upstream of the session is done before the
// session is read: work moves only downstream, from the fan-out to the
// tasks, the lane and the reader, so reading them in that order cannot
// miss work handed on between two reads.
func (s *Session) Settled(handled uint64) bool {
	s.mu.Lock()
	atts := append([]*attachment(nil), s.attachments...)
	s.mu.Unlock()
	for _, a := range atts {
		if f := a.fanoutOf(); f != nil && !f.waiting() {
			return false
		}
		a.mu.Lock()
		busy := a.running || a.dirty
		a.mu.Unlock()
		if busy {
			return false
		}
	}
	unread, taken := s.lane.drained()
	return unread == 0 && taken == uint32(handled) // both count modulo 2³²
}

// fanoutOf returns the fan-out a joined, nil before it joined one; it may
// be called from any goroutine.
func (a *attachment) fanoutOf() *tickFanout {
	fanouts.mu.Lock()
	defer fanouts.mu.Unlock()
	return a.fanout
}
