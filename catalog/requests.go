package catalog

import (
	"fmt"
	"hash/maphash"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/lifecycle"
)

// RequestWindow is how many recently applied request ids the FSM
// remembers with their results. A command whose request id is in the
// window is not applied again: its entry answers with the first result.
// The window is replicated state (every replica evicts the same id at the
// same entry, the oldest by apply order) and is part of every snapshot, so
// a retry is recognised on whichever node leads when it arrives. A retry
// that arrives after RequestWindow later requests were applied is applied
// as a new command; the writers that retry (node's commit path) give up at
// their deadline long before that many writes can commit.
const RequestWindow = 4096

// rememberedRequest is one entry of the window.
type rememberedRequest struct {
	ID     string           `json:"id"`
	Result lifecycle.Result `json:"result"`
}

// requestWindow is a bounded map from request id to first result, evicting
// in apply order. It is not safe for concurrent use: the FSM guards it
// with its mutex.
//
// Every applied command with a request id looks its id up, evicts the
// oldest and inserts its own, on the apply path that every commit waits
// for, so the window keeps its own index instead of a Go map: an
// open-addressed table of ring positions with a fragment of each id's
// hash, twice the window's size, which a lookup or an insert reads in one
// cache line or two and an eviction repairs by shifting its run back
// (linear probing without tombstones, so the table never fills up with
// deleted entries). Which ids the window holds does not depend on the
// hash: the hash seed only places them in the table.
type requestWindow struct {
	size  int
	ring  []windowEntry // in apply order, oldest at head once full
	head  int
	slots []windowSlot // len a power of two, at least twice size
	seed  maphash.Seed
}

type windowEntry struct {
	id     string
	hash   uint32 // of id, so that evicting it reads neither id nor its bytes
	result lifecycle.Result
}

// windowSlot is one place of the index: the ring position plus one (zero
// for an empty slot) and the low bits of the id's hash, which give the
// slot's home and spare most string comparisons.
type windowSlot struct {
	pos  uint32
	hash uint32
}

func newRequestWindow(size int) *requestWindow {
	n := 2
	for n < 2*size {
		n *= 2
	}
	return &requestWindow{size: size, ring: make([]windowEntry, 0, size), slots: make([]windowSlot, n), seed: maphash.MakeSeed()}
}

func (w *requestWindow) hash(id string) uint32 { return uint32(maphash.String(w.seed, id)) }

// find returns the index of the slot holding id, or of the empty slot
// where its probe ends.
func (w *requestWindow) find(id string, h uint32) (int, bool) {
	mask := uint32(len(w.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := w.slots[i]
		if s.pos == 0 {
			return int(i), false
		}
		if s.hash == h && w.ring[s.pos-1].id == id {
			return int(i), true
		}
	}
}

// lookup returns the first result of id.
func (w *requestWindow) lookup(id string) (lifecycle.Result, bool) {
	i, ok := w.find(id, w.hash(id))
	if !ok {
		return lifecycle.Result{}, false
	}
	return w.ring[w.slots[i].pos-1].result, true
}

// remember records the first result of id, evicting the oldest id when
// the window is full. id must not be in the window.
func (w *requestWindow) remember(id string, r lifecycle.Result) {
	if w.size <= 0 {
		return
	}
	h := w.hash(id)
	pos := len(w.ring)
	if pos < w.size {
		w.ring = append(w.ring, windowEntry{id: id, hash: h, result: r})
	} else {
		pos = w.head
		w.unindex(pos)
		w.ring[pos] = windowEntry{id: id, hash: h, result: r}
		w.head = (w.head + 1) % w.size
	}
	i, _ := w.find(id, h)
	w.slots[i] = windowSlot{pos: uint32(pos + 1), hash: h}
}

// unindex removes the entry at ring position pos from the index, moving
// back every later slot of its probe run that may take its place so that
// each stays reachable from its home.
func (w *requestWindow) unindex(pos int) {
	mask := len(w.slots) - 1
	i := int(w.ring[pos].hash) & mask
	for w.slots[i].pos != uint32(pos+1) {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; w.slots[j].pos != 0; j = (j + 1) & mask {
		// The slot at j may move to the hole at i unless its home lies
		// cyclically after i and no later than j.
		home := int(w.slots[j].hash) & mask
		if (j-home)&mask >= (j-i)&mask {
			w.slots[i] = w.slots[j]
			i = j
		}
	}
	w.slots[i] = windowSlot{}
}

// entries returns the window oldest first.
func (w *requestWindow) entries() []rememberedRequest {
	out := make([]rememberedRequest, 0, len(w.ring))
	for i := range w.ring {
		e := w.ring[(w.head+i)%len(w.ring)]
		out = append(out, rememberedRequest{ID: e.id, Result: e.result})
	}
	return out
}

// restoreRequestWindow rebuilds a window from entries (oldest first),
// refusing what a window never holds. A snapshot that holds more entries
// than size keeps the newest size of them, as applying them would have.
func restoreRequestWindow(size int, entries []rememberedRequest, revision uint64) (*requestWindow, error) {
	w := newRequestWindow(size)
	if len(entries) > size {
		entries = entries[len(entries)-size:]
	}
	for _, e := range entries {
		switch {
		case e.ID == "" || len(e.ID) > lifecycle.MaxRequestIDLen || !utf8.ValidString(e.ID):
			return nil, fmt.Errorf("%w: remembered request id %q is not a valid request id", ErrSnapshot, e.ID)
		case e.Result.Revision > revision:
			return nil, fmt.Errorf("%w: remembered request %q answered revision %d, after the catalog revision %d", ErrSnapshot, e.ID, e.Result.Revision, revision)
		}
		if _, dup := w.lookup(e.ID); dup {
			return nil, fmt.Errorf("%w: remembered request %q appears twice", ErrSnapshot, e.ID)
		}
		w.remember(e.ID, e.Result)
	}
	return w, nil
}
