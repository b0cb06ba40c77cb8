package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/session"
)

// Bounds of the transactions held for a reconnecting client.
const (
	// DefaultResumeTimeout is how long the open transaction of a session
	// whose connection was lost waits for its client to reconnect and take
	// it up (Limits.ResumeTimeout).
	DefaultResumeTimeout = time.Minute
	// maxHeld bounds the transactions held at once on a server; past it
	// the oldest is dropped (reverted). Each identity may hold at most
	// Limits.MaxSessionsPerIdentity of them, its share of the sessions.
	maxHeld = 1024
	// takeoverWait bounds how long a reconnecting client waits for the
	// session it takes over (one whose loss the server had not noticed)
	// to end and hand its transaction over.
	takeoverWait = 5 * time.Second
)

// newResumeToken returns a fresh session's resume token: 24 random bytes,
// which no client can guess, so that naming one proves the reconnecting
// client is the one the welcome was sent to (the server also requires the
// same identity).
func newResumeToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// heldTx is a transaction held for its client under the token of the
// session it was taken from.
type heldTx struct {
	identity string
	tx       session.HeldTransaction
	at       time.Duration // monotonic reading when it was held
}

// resumptions holds the open transactions of sessions whose connection was
// lost, by the lost session's resume token, and the live sessions by their
// token, so a client that reconnects before the server noticed the loss
// takes its session over. Expired entries go lazily, as entries are held
// and claimed: no timer runs for them.
type resumptions struct {
	src     timesource.Source
	timeout time.Duration
	share   int // per identity

	mu      sync.Mutex
	held    map[string]heldTx
	streams map[string]*stream
}

func newResumptions(src timesource.Source, timeout time.Duration, share int) *resumptions {
	return &resumptions{src: src, timeout: timeout, share: share, held: make(map[string]heldTx), streams: make(map[string]*stream)}
}

// register records st, a session whose welcome names st.token.
func (r *resumptions) register(st *stream) {
	r.mu.Lock()
	r.streams[st.token] = st
	r.mu.Unlock()
}

// end records that st ended; tx, when ok, is its open transaction, held
// for st's client. An identity past its share loses its oldest held
// transaction, and the server past maxHeld its oldest.
func (r *resumptions) end(st *stream, tx session.HeldTransaction, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.streams, st.token)
	if !ok {
		return
	}
	now := r.src.Monotonic()
	r.expireLocked(now)
	mine := 0
	var oldestMine, oldest string
	for tok, h := range r.held {
		if oldest == "" || h.at < r.held[oldest].at {
			oldest = tok
		}
		if h.identity == st.identity {
			mine++
			if oldestMine == "" || h.at < r.held[oldestMine].at {
				oldestMine = tok
			}
		}
	}
	switch {
	case mine >= r.share:
		delete(r.held, oldestMine)
	case len(r.held) >= maxHeld:
		delete(r.held, oldest)
	}
	r.held[st.token] = heldTx{identity: st.identity, tx: tx, at: now}
}

// expireLocked drops every held transaction older than the timeout.
func (r *resumptions) expireLocked(now time.Duration) {
	for tok, h := range r.held {
		if now-h.at > r.timeout {
			delete(r.held, tok)
		}
	}
}

// claim returns the transaction held under token for identity, and
// removes it. A session still live under token, of the same identity, is
// the client's own whose loss the server has not noticed: it is ended
// first (within takeoverWait), and its transaction, if it has one, is the
// one returned. Another identity's token is as good as none.
func (r *resumptions) claim(ctx context.Context, token, identity string) (session.HeldTransaction, bool) {
	h, ok, live := r.take(token, identity)
	if ok || live == nil {
		return h, ok
	}
	live.takeOver()
	t := r.src.NewTimer(takeoverWait)
	defer t.Stop()
	select {
	case <-live.ended:
	case <-t.C():
		return session.HeldTransaction{}, false
	case <-ctx.Done():
		return session.HeldTransaction{}, false
	}
	h, ok, _ = r.take(token, identity)
	return h, ok
}

// take removes and returns what is held under token for identity, or
// the live session under token of the same identity.
func (r *resumptions) take(token, identity string) (session.HeldTransaction, bool, *stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(r.src.Monotonic())
	if h, ok := r.held[token]; ok && h.identity == identity {
		delete(r.held, token)
		return h.tx, true, nil
	}
	if st := r.streams[token]; st != nil && st.identity == identity {
		return session.HeldTransaction{}, false, st
	}
	return session.HeldTransaction{}, false, nil
}

// drop reverts every held transaction (the server closes).
func (r *resumptions) drop() {
	r.mu.Lock()
	clear(r.held)
	r.mu.Unlock()
}

// list returns the transactions held now, each with the identity it is
// held for, for SHOW ALL TRANSACTIONS (session.Directory.SetHeld).
func (r *resumptions) list() []session.HeldEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(r.src.Monotonic())
	out := make([]session.HeldEntry, 0, len(r.held))
	for _, h := range r.held {
		out = append(out, session.HeldEntry{Identity: h.identity, Transaction: h.tx})
	}
	return out
}
