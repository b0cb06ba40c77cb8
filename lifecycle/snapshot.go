package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nspl-dev/nspl/clock"
)

// SnapshotVersion is the JSON snapshot format MarshalSnapshot writes.
// RestoreSnapshot reads it and the binary version 2 of
// MarshalSnapshotBinary (snapshot_binary.go), which the catalog writes.
const SnapshotVersion = 1

// snapshotV1 is the frozen version-1 format: domains and nodes as sorted
// lists (deterministic bytes), the mapping under its spec field names.
type snapshotV1 struct {
	Version  int              `json:"version"`
	Revision uint64           `json:"revision"`
	Domains  []domainV1       `json:"domains"`
	Nodes    []RegisteredNode `json:"nodes"`
}

type domainV1 struct {
	Domain
	Mapping *mappingV1 `json:"mapping"`
}

type mappingV1 struct {
	WallStartedAt int64   `json:"wall_started_at"`
	LogicalStart  int64   `json:"logical_start"`
	Rate          float64 `json:"time_rate"`
}

// MarshalSnapshot encodes the whole state. Equal states give equal bytes.
func (s *State) MarshalSnapshot() ([]byte, error) {
	snap := snapshotV1{Version: SnapshotVersion, Revision: s.revision, Domains: []domainV1{}, Nodes: s.Nodes()}
	for _, d := range s.Domains() {
		w := domainV1{Domain: d}
		if d.Mapping != nil {
			w.Mapping = &mappingV1{WallStartedAt: d.Mapping.WallStartedAt, LogicalStart: d.Mapping.LogicalStart, Rate: d.Mapping.Rate}
		}
		w.Domain.Mapping = nil
		snap.Domains = append(snap.Domains, w)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: encode snapshot: %w", err)
	}
	return b, nil
}

// RestoreSnapshot decodes a snapshot, JSON (version 1) or binary (version
// 2), into a new State that replaces, never merges with, whatever the
// caller held. Decoding is strict (unknown fields, trailing data and unknown
// versions are refused) and the result is checked against every Domain
// invariant, so a corrupt snapshot is an ErrInvalidSnapshot error rather
// than a state that Apply could misbehave on. It never panics.
func RestoreSnapshot(b []byte) (*State, error) {
	if len(b) > 0 && b[0] == binarySnapshotMark {
		return restoreBinarySnapshot(b)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, errSnapshot("does not decode: %v", err)
	}
	if head.Version != SnapshotVersion {
		return nil, errSnapshot("format version %d is not supported; this build reads version %d", head.Version, SnapshotVersion)
	}
	var snap snapshotV1
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&snap); err != nil {
		return nil, errSnapshot("does not decode: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errSnapshot("has trailing data")
	}
	s := NewState()
	s.revision = snap.Revision
	records := make([]*Domain, 0, len(snap.Domains))
	seen := make(map[string]struct{}, len(snap.Domains))
	for _, w := range snap.Domains {
		d := w.Domain
		if w.Mapping != nil {
			d.Mapping = &clock.Mapping{WallStartedAt: w.Mapping.WallStartedAt, LogicalStart: w.Mapping.LogicalStart, Rate: w.Mapping.Rate}
		}
		if err := validateDomain(d); err != nil {
			return nil, errSnapshot("%v", err)
		}
		if _, dup := seen[d.Name]; dup {
			return nil, errSnapshot("domain '%s' appears twice", d.Name)
		}
		seen[d.Name] = struct{}{}
		if d.Revision > snap.Revision {
			return nil, errSnapshot("domain '%s' revision %d is after the catalog revision %d", d.Name, d.Revision, snap.Revision)
		}
		records = append(records, &d)
	}
	s.setRecords(records)
	for _, d := range records {
		if keepsAuthority(d) {
			s.pacedRunning++
		}
	}
	for _, n := range snap.Nodes {
		if n.Name == "" || n.Incarnation == 0 {
			return nil, errSnapshot("node %q with incarnation %d is not a valid registration", n.Name, n.Incarnation)
		}
		if _, dup := s.nodes[n.Name]; dup {
			return nil, errSnapshot("node '%s' appears twice", n.Name)
		}
		if n.Registered > snap.Revision {
			return nil, errSnapshot("node '%s' registration %d is after the catalog revision %d", n.Name, n.Registered, snap.Revision)
		}
		s.nodes[n.Name] = n
	}
	return s, nil
}

func errSnapshot(format string, args ...any) *Error {
	return newError(CodeInvalidSnapshot, "", "lifecycle snapshot "+format, args...)
}
