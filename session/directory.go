package session

import (
	"sync"
)

// Directory lists the open sessions of one node (a server's, or an
// embedded engine's) for SHOW ALL TRANSACTIONS, and, through the function
// its owner sets (SetHeld), the transactions held for clients that lost
// their session. A session joins the directory of its Options when it is
// made, with the next number, and leaves it when it closes. A Directory is
// safe for concurrent use; its zero value is not: make one with
// NewDirectory.
type Directory struct {
	mu   sync.Mutex
	next uint64
	open map[*Session]uint64
	held func() []HeldEntry
}

// HeldEntry is a transaction held for a reconnecting client: the identity
// it is held for and the transaction.
type HeldEntry struct {
	Identity    string
	Transaction HeldTransaction
}

// NewDirectory returns an empty directory.
func NewDirectory() *Directory { return &Directory{open: make(map[*Session]uint64)} }

// SetHeld sets the function that lists the held transactions (nil: none).
func (d *Directory) SetHeld(held func() []HeldEntry) {
	d.mu.Lock()
	d.held = held
	d.mu.Unlock()
}

// join adds s and returns its number, from 1.
func (d *Directory) join(s *Session) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	d.open[s] = d.next
	return d.next
}

// leave removes s.
func (d *Directory) leave(s *Session) {
	d.mu.Lock()
	delete(d.open, s)
	d.mu.Unlock()
}

// list is what SHOW ALL TRANSACTIONS reads of a directory: its open
// sessions and the function that lists the held transactions.
func (d *Directory) list() ([]*Session, func() []HeldEntry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*Session, 0, len(d.open))
	for s := range d.open {
		out = append(out, s)
	}
	return out, d.held
}

// listing is a session's place in its directory: the directory, the
// session's number there and the identity it serves.
type listing struct {
	dir      *Directory
	number   uint64
	identity string
}
