package lifecycle

import (
	"slices"
	"strings"
)

// The domain table is a two-level trie of sorted leaves, indexed by
// DomainHash: the low five bits of the hash pick a branch of the root, the
// next five a leaf of the branch. Records (*Domain) are never written once
// stored: a transition stores a new record. Root and branches hold
// pointers, so copying a path copies two arrays of thirty-two pointers.
// (With sixteen, a catalog of 100,000 domains had leaves of about 390
// records, and a lookup's binary search over them cost a DESCRIBE half as
// much again as at 100 domains; 1,024 leaves keep it near 100.)
//
// The table is copy-on-write. A State may write in place only the root,
// branches and leaves it created itself since it was created or last cloned
// (its tableOwnership); anything else may be shared with clones and is
// copied first, which costs about n/1024 pointers for n domains. Clone
// therefore shares the whole table in constant time, and the working state
// of a replica, cloned once per applied batch, copies only the first path
// it touches in each batch.
//
// A table of at most flatMax domains is not a trie at all but one sorted
// slice of records (State.flat, the root nil), copied whole on the first
// write after a clone: for the small catalogs that are the common case,
// one write to a published table then copies one short array instead of
// a root, a branch and a leaf. The table changes form when a create or a
// drop crosses flatMax, in one pass over at most flatMax+1 records.
//
// The shape is canonical (at most flatMax domains are a flat slice, nil
// when empty, and a nil root; more are a trie and no flat slice; in the
// trie an empty leaf is nil and a branch with no domains is nil; every
// slice is sorted by name), so equal domains give equal tables however they
// were built.
const (
	tableFanout = 32
	tableBits   = 5
	flatMax     = 32
)

// tableOwnership records the parts of the table a State created since it
// was created or last cloned, and may therefore write in place.
type tableOwnership struct {
	flat     bool // the flat slice's backing array
	root     bool
	branches uint32
	leaves   [tableFanout]uint32
}

type domainRoot [tableFanout]*domainBranch

type domainBranch [tableFanout]*domainLeaf

// domainLeaf holds the records of one leaf sorted by name; a branch holds
// nil instead of an empty leaf.
type domainLeaf struct{ recs []*Domain }

// records returns the leaf's records; none for a nil leaf.
func (l *domainLeaf) records() []*Domain {
	if l == nil {
		return nil
	}
	return l.recs
}

// tableSlot returns the branch and leaf positions of name.
func tableSlot(name string) (branch, leaf int) {
	h := DomainHash(name)
	return int(h & (tableFanout - 1)), int((h >> tableBits) & (tableFanout - 1))
}

func compareRecordName(d *Domain, name string) int { return strings.Compare(d.Name, name) }

// lookup returns the stored record of name. The record is shared and must
// not be written.
func (s *State) lookup(name string) (*Domain, bool) {
	if s.domains == nil {
		i, ok := slices.BinarySearchFunc(s.flat, name, compareRecordName)
		if !ok {
			return nil, false
		}
		return s.flat[i], true
	}
	b, l := tableSlot(name)
	branch := s.domains[b]
	if branch == nil {
		return nil, false
	}
	leaf := branch[l].records()
	i, ok := slices.BinarySearchFunc(leaf, name, compareRecordName)
	if !ok {
		return nil, false
	}
	return leaf[i], true
}

// writablePath returns the branch that holds slot (b, l), copying the root
// and the branch first unless s owns them, and reports whether s owns the
// leaf.
func (s *State) writablePath(b, l int) (*domainBranch, bool) {
	if !s.own.root {
		root := &domainRoot{}
		if s.domains != nil {
			*root = *s.domains
		}
		s.domains = root
		s.own.root = true
	}
	bit := uint32(1) << b
	if s.own.branches&bit == 0 {
		branch := &domainBranch{}
		if s.domains[b] != nil {
			*branch = *s.domains[b]
		}
		s.domains[b] = branch
		s.own.branches |= bit
	}
	return s.domains[b], s.own.leaves[b]&(1<<l) != 0
}

// putRecord stores d, replacing the record of the same name. d must not be
// written afterwards.
func (s *State) putRecord(d *Domain) {
	if s.domains == nil {
		s.putFlat(d)
		return
	}
	b, l := tableSlot(d.Name)
	branch, owned := s.writablePath(b, l)
	leaf := branch[l].records()
	i, found := slices.BinarySearchFunc(leaf, d.Name, compareRecordName)
	if found && keepsAuthority(leaf[i]) {
		s.pacedRunning--
	}
	if keepsAuthority(d) {
		s.pacedRunning++
	}
	switch {
	case found && owned:
		leaf[i] = d
	case found:
		leaf = slices.Clone(leaf)
		leaf[i] = d
	case owned:
		leaf = slices.Insert(leaf, i, d)
	default:
		grown := make([]*Domain, len(leaf)+1)
		copy(grown, leaf[:i])
		grown[i] = d
		copy(grown[i+1:], leaf[i:])
		leaf = grown
	}
	if !found {
		s.count++
	}
	s.setLeaf(branch, b, l, owned, leaf)
}

// putFlat is putRecord on a flat table; the record that would make it
// hold more than flatMax domains turns it into a trie.
func (s *State) putFlat(d *Domain) {
	i, found := slices.BinarySearchFunc(s.flat, d.Name, compareRecordName)
	if found && keepsAuthority(s.flat[i]) {
		s.pacedRunning--
	}
	if keepsAuthority(d) {
		s.pacedRunning++
	}
	switch {
	case found && s.own.flat:
		s.flat[i] = d
	case found:
		s.flat = slices.Clone(s.flat)
		s.flat[i] = d
	case len(s.flat) == flatMax:
		recs := slices.Insert(slices.Clone(s.flat), i, d)
		s.flat, s.domains = nil, buildTable(recs)
		s.own = tableOwnership{}
	case s.own.flat:
		s.flat = slices.Insert(s.flat, i, d)
	default:
		grown := make([]*Domain, len(s.flat)+1)
		copy(grown, s.flat[:i])
		grown[i] = d
		copy(grown[i+1:], s.flat[i:])
		s.flat = grown
	}
	if !found {
		s.count++
	}
	s.own.flat = s.flat != nil
}

// setLeaf stores recs as leaf l of branch b (s's writable branch), in
// place when s owns the leaf, and marks it owned; no records store nil.
func (s *State) setLeaf(branch *domainBranch, b, l int, owned bool, recs []*Domain) {
	switch {
	case len(recs) == 0:
		branch[l] = nil
	case owned && branch[l] != nil:
		branch[l].recs = recs
	default:
		branch[l] = &domainLeaf{recs: recs}
	}
	s.own.leaves[b] |= 1 << l
}

// removeRecord deletes the record of name, if any, keeping the shape
// canonical.
func (s *State) removeRecord(name string) {
	if _, ok := s.lookup(name); !ok {
		return
	}
	if s.domains == nil {
		s.removeFlat(name)
		return
	}
	b, l := tableSlot(name)
	branch, owned := s.writablePath(b, l)
	leaf := branch[l].records()
	i, _ := slices.BinarySearchFunc(leaf, name, compareRecordName)
	if keepsAuthority(leaf[i]) {
		s.pacedRunning--
	}
	switch {
	case len(leaf) == 1:
		leaf = nil
	case owned:
		leaf = slices.Delete(leaf, i, i+1)
	default:
		leaf = append(append(make([]*Domain, 0, len(leaf)-1), leaf[:i]...), leaf[i+1:]...)
	}
	s.setLeaf(branch, b, l, owned, leaf)
	s.count--
	if *branch == (domainBranch{}) {
		s.domains[b] = nil
		s.own.branches &^= 1 << b
		s.own.leaves[b] = 0
	}
	if s.count == flatMax {
		s.flat, s.domains = s.sortedRecords(), nil
		s.own = tableOwnership{flat: true}
	}
}

// removeFlat is removeRecord on a flat table that holds name.
func (s *State) removeFlat(name string) {
	i, _ := slices.BinarySearchFunc(s.flat, name, compareRecordName)
	if keepsAuthority(s.flat[i]) {
		s.pacedRunning--
	}
	switch {
	case len(s.flat) == 1:
		s.flat = nil
	case s.own.flat:
		s.flat = slices.Delete(s.flat, i, i+1)
	default:
		s.flat = append(append(make([]*Domain, 0, len(s.flat)-1), s.flat[:i]...), s.flat[i+1:]...)
	}
	s.count--
	s.own.flat = s.flat != nil
}

// keepsAuthority reports whether d is a running paced domain: one whose
// clock an authority keeps (State.RunsPacedDomain counts them).
func keepsAuthority(d *Domain) bool { return d.Pace == Paced && d.Running() }

// setRecords replaces the table of s, which s must not share, with the
// canonical table of records, which must have distinct names, in one pass
// (RestoreSnapshot's bulk load).
func (s *State) setRecords(records []*Domain) {
	s.count, s.own = len(records), tableOwnership{}
	if len(records) > flatMax {
		s.flat, s.domains = nil, buildTable(records)
		return
	}
	s.domains = nil
	s.flat = nil
	if len(records) > 0 {
		s.flat = slices.Clone(records)
		slices.SortFunc(s.flat, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
	}
}

// buildTable returns the trie of records, which must have distinct names,
// in one pass.
func buildTable(records []*Domain) *domainRoot {
	var root domainRoot
	for _, d := range records {
		b, l := tableSlot(d.Name)
		if root[b] == nil {
			root[b] = &domainBranch{}
		}
		if root[b][l] == nil {
			root[b][l] = &domainLeaf{}
		}
		root[b][l].recs = append(root[b][l].recs, d)
	}
	for _, branch := range root {
		if branch == nil {
			continue
		}
		for _, leaf := range branch {
			slices.SortFunc(leaf.records(), func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return &root
}

// sortedRecords returns the stored records sorted by name. They are shared
// and must not be written.
func (s *State) sortedRecords() []*Domain {
	if s.domains == nil {
		return slices.Clone(s.flat)
	}
	out := make([]*Domain, 0, s.count)
	if s.domains != nil {
		for _, branch := range s.domains {
			if branch == nil {
				continue
			}
			for _, leaf := range branch {
				out = append(out, leaf.records()...)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
	return out
}
