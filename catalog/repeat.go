package catalog

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// repeatWindow is how long raft's repeats of one warning or error about one
// peer are collapsed into a single line.
const repeatWindow = 10 * time.Second

// maxRepeatKeys bounds the messages a repeatLimiter tracks; past it, an
// untracked message is logged as it comes.
const maxRepeatKeys = 1024

// repeatLimiter collapses the warnings and errors raft repeats for one peer:
// with a dead peer, raft logs "failed to heartbeat to" every few hundred
// milliseconds for as long as the peer stays away. The first occurrence of a
// (level, message, peer) is logged at once; further ones within repeatWindow
// of the last logged one are counted, and the next one logged after the
// window carries the count as a "repeated" attribute. Raft names the peer
// under one of peerKeys: "peer" in replication ("failed to heartbeat to",
// "failed to appendEntries to"), "target" in elections ("failed to make
// requestVote RPC") and "server-id" in the leader's lease check ("failed to
// contact"). Messages without a peer and levels below Warn are never
// collapsed, and a logger that writes raft's debug lines collapses nothing
// (slogAdapter.Log). Its memory is bounded by maxRepeatKeys. It is safe for
// concurrent use.
type repeatLimiter struct {
	clock  timesource.Source
	window time.Duration

	mu   sync.Mutex
	seen map[repeatKey]*repeatState
}

type repeatKey struct {
	level hclog.Level
	msg   string
	peer  string
}

type repeatState struct {
	logged     time.Duration // monotonic reading of the last logged line
	suppressed int
}

func newRepeatLimiter(clock timesource.Source, window time.Duration) *repeatLimiter {
	return &repeatLimiter{clock: clock, window: window, seen: make(map[repeatKey]*repeatState)}
}

// allow reports whether a line should be logged, and how many lines like it
// were suppressed since the last one logged.
func (r *repeatLimiter) allow(level hclog.Level, msg string, args []any) (bool, int) {
	if r == nil || level < hclog.Warn {
		return true, 0
	}
	peer, ok := peerOf(args)
	if !ok {
		return true, 0
	}
	key := repeatKey{level: level, msg: msg, peer: peer}
	now := r.clock.Monotonic()
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.seen[key]
	if ok && now-st.logged < r.window {
		st.suppressed++
		return false, 0
	}
	if !ok {
		if len(r.seen) >= maxRepeatKeys {
			r.evictLocked(now)
		}
		if len(r.seen) >= maxRepeatKeys {
			return true, 0
		}
		st = &repeatState{}
		r.seen[key] = st
	}
	suppressed := st.suppressed
	st.logged, st.suppressed = now, 0
	return true, suppressed
}

// evictLocked forgets the messages whose window has passed.
func (r *repeatLimiter) evictLocked(now time.Duration) {
	for k, st := range r.seen {
		if now-st.logged >= r.window {
			delete(r.seen, k)
		}
	}
}

// peerKeys are the keys under which raft names the peer a line is about.
var peerKeys = []string{"peer", "target", "server-id"}

// peerOf returns the peer a line is about: the value of the first of
// peerKeys in hclog arguments, prefixed by its key.
func peerOf(args []any) (string, bool) {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && slices.Contains(peerKeys, k) {
			return k + "=" + fmt.Sprint(args[i+1]), true
		}
	}
	return "", false
}
