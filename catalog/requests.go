package catalog

import (
	"fmt"
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
type requestWindow struct {
	size    int
	ring    []string // ids in apply order, oldest at head once full
	head    int
	results map[string]lifecycle.Result
}

func newRequestWindow(size int) *requestWindow {
	return &requestWindow{size: size, results: make(map[string]lifecycle.Result)}
}

// lookup returns the first result of id.
func (w *requestWindow) lookup(id string) (lifecycle.Result, bool) {
	r, ok := w.results[id]
	return r, ok
}

// remember records the first result of id, evicting the oldest id when
// the window is full. id must not be in the window.
func (w *requestWindow) remember(id string, r lifecycle.Result) {
	if len(w.ring) < w.size {
		w.ring = append(w.ring, id)
	} else {
		delete(w.results, w.ring[w.head])
		w.ring[w.head] = id
		w.head = (w.head + 1) % w.size
	}
	w.results[id] = r
}

// entries returns the window oldest first.
func (w *requestWindow) entries() []rememberedRequest {
	out := make([]rememberedRequest, 0, len(w.ring))
	for i := range w.ring {
		id := w.ring[(w.head+i)%len(w.ring)]
		out = append(out, rememberedRequest{ID: id, Result: w.results[id]})
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
		if _, dup := w.results[e.ID]; dup {
			return nil, fmt.Errorf("%w: remembered request %q appears twice", ErrSnapshot, e.ID)
		}
		w.remember(e.ID, e.Result)
	}
	return w, nil
}
