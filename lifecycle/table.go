package lifecycle

import (
	"slices"
	"strings"
)

// The domain table is a persistent (immutable) two-level trie of sorted
// leaves, indexed by DomainHash: the low four bits of the hash pick a branch
// of the root, the next four a leaf of the branch. Nothing reachable from a
// State's table is ever written after it is stored: a write copies the root,
// one branch and one leaf (about n/256 pointers for n domains) and stores a
// new *Domain record, so State.Clone shares the whole table and costs one
// small allocation whatever the number of domains.
//
// The shape is canonical (an empty leaf is nil, a branch with no domains is
// nil, a table with no domains is a nil root, every leaf is sorted by name),
// so two states holding equal domains have deeply equal tables however they
// were built.
const (
	tableFanout = 16
	tableBits   = 4
)

type domainRoot [tableFanout]*domainBranch

type domainBranch [tableFanout][]*Domain

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
		return nil, false
	}
	b, l := tableSlot(name)
	branch := s.domains[b]
	if branch == nil {
		return nil, false
	}
	leaf := branch[l]
	i, ok := slices.BinarySearchFunc(leaf, name, compareRecordName)
	if !ok {
		return nil, false
	}
	return leaf[i], true
}

// putRecord stores d, replacing the record of the same name. d must not be
// written afterwards.
func (s *State) putRecord(d *Domain) {
	b, l := tableSlot(d.Name)
	var root domainRoot
	if s.domains != nil {
		root = *s.domains
	}
	var branch domainBranch
	if root[b] != nil {
		branch = *root[b]
	}
	old := branch[l]
	i, found := slices.BinarySearchFunc(old, d.Name, compareRecordName)
	var leaf []*Domain
	if found {
		leaf = slices.Clone(old)
		leaf[i] = d
	} else {
		leaf = make([]*Domain, len(old)+1)
		copy(leaf, old[:i])
		leaf[i] = d
		copy(leaf[i+1:], old[i:])
		s.count++
	}
	branch[l] = leaf
	root[b] = &branch
	s.domains = &root
}

// removeRecord deletes the record of name, if any, keeping the shape
// canonical.
func (s *State) removeRecord(name string) {
	if _, ok := s.lookup(name); !ok {
		return
	}
	b, l := tableSlot(name)
	root := *s.domains
	branch := *root[b]
	old := branch[l]
	i, _ := slices.BinarySearchFunc(old, name, compareRecordName)
	var leaf []*Domain
	if len(old) > 1 {
		leaf = make([]*Domain, 0, len(old)-1)
		leaf = append(append(leaf, old[:i]...), old[i+1:]...)
	}
	branch[l] = leaf
	s.count--
	if slices.IndexFunc(branch[:], func(l []*Domain) bool { return l != nil }) < 0 {
		root[b] = nil
	} else {
		root[b] = &branch
	}
	if root == (domainRoot{}) {
		s.domains = nil
	} else {
		s.domains = &root
	}
}

// buildTable returns the canonical table of records, which must have
// distinct names, in one pass (RestoreSnapshot's bulk load).
func buildTable(records []*Domain) *domainRoot {
	if len(records) == 0 {
		return nil
	}
	var root domainRoot
	for _, d := range records {
		b, l := tableSlot(d.Name)
		if root[b] == nil {
			root[b] = &domainBranch{}
		}
		root[b][l] = append(root[b][l], d)
	}
	for _, branch := range root {
		if branch == nil {
			continue
		}
		for _, leaf := range branch {
			slices.SortFunc(leaf, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	return &root
}

// sortedRecords returns the stored records sorted by name. They are shared
// and must not be written.
func (s *State) sortedRecords() []*Domain {
	out := make([]*Domain, 0, s.count)
	if s.domains != nil {
		for _, branch := range s.domains {
			if branch == nil {
				continue
			}
			for _, leaf := range branch {
				out = append(out, leaf...)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Domain) int { return strings.Compare(a.Name, b.Name) })
	return out
}
