package lifecycle

import "github.com/nspl-dev/nspl/clock"

// The binary snapshot, version 3, what MarshalSnapshotBinary writes and
// RestoreSnapshot reads besides the JSON of version 1. It costs a fraction
// of the JSON's bytes and time, which is what bounds a restart with a large
// catalog: a node restores its snapshot before it answers.
//
//	0x00                 a byte no JSON text begins with
//	uvarint 3            the version (2 is read too: it lacks the cordoned byte)
//	uvarint revision
//	uvarint count        then count domains, in table order, each
//	  str name, byte pace, uvarint period, uvarint skew, byte placement,
//	  byte status, uvarint generation, point last start, bool mapping
//	  (the mapping itself is the last start's: Domain's invariant),
//	  str authority node, uvarint incarnation, uvarint authority revision,
//	  uvarint revision
//	uvarint count        then count nodes, sorted by name, each
//	  str name, uvarint incarnation, str raft id, str raft address,
//	  str API address, uvarint registered, bool cordoned
//
// with the command codec's fields (codec.go): minimal varints, strings as a
// uvarint length and UTF-8 bytes, a point as its mode byte, two varints and
// a little-endian float64. Nothing may follow. Table order is canonical
// (table.go), so equal states give equal bytes.
const (
	binarySnapshotMark    = 0x00
	binarySnapshotVersion = 3
	// binarySnapshotV2 is the earlier version, read but no longer written:
	// its node entries have no cordoned byte.
	binarySnapshotV2 = 2
	// minSnapshotDomainSize and minSnapshotNodeSize are the fewest bytes
	// one entry takes, so a count the rest cannot hold is refused before
	// anything is allocated.
	minSnapshotDomainSize = 23
	minSnapshotNodeSize   = 6
)

// MarshalSnapshotBinary encodes the whole state in the binary snapshot
// format (version 3). Equal states give equal bytes. RestoreSnapshot reads
// it back.
func (s *State) MarshalSnapshotBinary() ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 64+48*s.count)}
	e.byte(binarySnapshotMark)
	e.uvarint(binarySnapshotVersion)
	e.uvarint(s.revision)
	e.uvarint(uint64(s.count))
	s.eachRecord(func(d *Domain) {
		e.str(d.Name)
		e.byte(byte(d.Pace))
		e.uvarint(d.Period)
		e.uvarint(d.Skew)
		e.byte(byte(d.Placement))
		e.byte(byte(d.Status))
		e.uvarint(d.Generation)
		e.point(d.LastStart)
		e.bool(d.Mapping != nil)
		e.str(d.Authority.Node)
		e.uvarint(d.Authority.Incarnation)
		e.uvarint(d.Authority.Revision)
		e.uvarint(d.Revision)
	})
	nodes := s.Nodes()
	e.uvarint(uint64(len(nodes)))
	for _, n := range nodes {
		e.str(n.Name)
		e.uvarint(n.Incarnation)
		e.str(n.RaftID)
		e.str(n.RaftAddr)
		e.str(n.APIAddr)
		e.uvarint(n.Registered)
		e.bool(n.Cordoned)
	}
	if e.bad != "" {
		return nil, errSnapshot("cannot be encoded: %q is not valid UTF-8", e.bad)
	}
	return e.buf, nil
}

// eachRecord calls fn with every stored record in table order. The records
// are shared and must not be written.
func (s *State) eachRecord(fn func(*Domain)) {
	if s.domains == nil {
		for _, d := range s.flat {
			fn(d)
		}
		return
	}
	for _, branch := range s.domains {
		if branch == nil {
			continue
		}
		for _, leaf := range branch {
			for _, d := range leaf.records() {
				fn(d)
			}
		}
	}
}

// restoreBinarySnapshot decodes a version 2 or 3 snapshot (b[0] is the mark),
// with the checks RestoreSnapshot documents.
func restoreBinarySnapshot(b []byte) (*State, error) {
	d := &decoder{b: b, text: string(b), off: 1, snapshot: true}
	version := d.uvarint()
	if d.err == nil && version != binarySnapshotVersion && version != binarySnapshotV2 {
		return nil, errSnapshot("format version %d is not supported; this build reads versions 1, 2 and 3", version)
	}
	revision := d.uvarint()
	count := d.count(minSnapshotDomainSize)
	recs := make([]Domain, count)
	records := make([]*Domain, count)
	// One slab for the mappings: its capacity is never exceeded, so the
	// pointers into it stay valid.
	mappings := make([]clock.Mapping, 0, count)
	for i := range recs {
		r := &recs[i]
		r.Name = d.str()
		r.Pace = Pace(d.byte())
		r.Period = d.uvarint()
		r.Skew = d.uvarint()
		r.Placement = Placement(d.byte())
		r.Status = Status(d.byte())
		r.Generation = d.uvarint()
		r.LastStart = d.point()
		if d.bool() {
			mappings = append(mappings, r.LastStart.Mapping())
			r.Mapping = &mappings[len(mappings)-1]
		}
		r.Authority.Node = d.str()
		r.Authority.Incarnation = d.uvarint()
		r.Authority.Revision = d.uvarint()
		r.Revision = d.uvarint()
		if d.err != nil {
			return nil, d.err
		}
		if err := validateDomain(*r); err != nil {
			return nil, errSnapshot("%v", err)
		}
		if r.Revision > revision {
			return nil, errSnapshot("domain '%s' revision %d is after the catalog revision %d", r.Name, r.Revision, revision)
		}
		records[i] = r
	}
	s := NewState()
	s.revision = revision
	nodes := d.count(minSnapshotNodeSize)
	for range nodes {
		n := RegisteredNode{Name: d.str(), Incarnation: d.uvarint(), RaftID: d.str(), RaftAddr: d.str(), APIAddr: d.str(), Registered: d.uvarint()}
		if version != binarySnapshotV2 {
			n.Cordoned = d.bool()
		}
		if d.err != nil {
			return nil, d.err
		}
		if err := s.addSnapshotNode(n); err != nil {
			return nil, err
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(b) {
		return nil, errSnapshot("has trailing data at byte %d", d.off)
	}
	s.setRecords(records)
	if name, dup := s.duplicateName(); dup {
		return nil, errSnapshot("domain '%s' appears twice", name)
	}
	for _, r := range records {
		if keepsAuthority(r) {
			s.pacedRunning++
		}
	}
	return s, nil
}

// duplicateName reports a name the table holds twice: the table keeps each
// leaf (or the flat slice) sorted by name and a name always lands in the
// same leaf, so a duplicate is two neighbours.
func (s *State) duplicateName() (string, bool) {
	check := func(recs []*Domain) (string, bool) {
		for i := 1; i < len(recs); i++ {
			if recs[i-1].Name == recs[i].Name {
				return recs[i].Name, true
			}
		}
		return "", false
	}
	if s.domains == nil {
		return check(s.flat)
	}
	for _, branch := range s.domains {
		if branch == nil {
			continue
		}
		for _, leaf := range branch {
			if name, dup := check(leaf.records()); dup {
				return name, true
			}
		}
	}
	return "", false
}

// addSnapshotNode adds a restored registration after checking it.
func (s *State) addSnapshotNode(n RegisteredNode) error {
	if n.Name == "" || n.Incarnation == 0 {
		return errSnapshot("node %q with incarnation %d is not a valid registration", n.Name, n.Incarnation)
	}
	if _, dup := s.nodes[n.Name]; dup {
		return errSnapshot("node '%s' appears twice", n.Name)
	}
	if n.Registered > s.revision {
		return errSnapshot("node '%s' registration %d is after the catalog revision %d", n.Name, n.Registered, s.revision)
	}
	s.nodes[n.Name] = n
	return nil
}
