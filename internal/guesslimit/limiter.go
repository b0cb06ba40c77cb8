package guesslimit

import (
	"crypto/subtle"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Defaults of Config.
const (
	// DefaultPerAddress is how many wrong tokens one address prefix may
	// send within one Window.
	DefaultPerAddress = 10
	// DefaultGlobal is how many wrong tokens all prefixes that are not
	// known may send together within one Window.
	DefaultGlobal = 100
	// DefaultWindow is the period the counts cover.
	DefaultWindow = time.Minute
	// DefaultKnownFor is how long a prefix that presented the right token
	// stays exempt from the global ceiling.
	DefaultKnownFor = 24 * time.Hour
	// DefaultMaxAddresses bounds the prefixes remembered at once.
	DefaultMaxAddresses = 4096
)

// Config configures a Limiter. A zero field takes its default; a negative
// one too.
type Config struct {
	// PerAddress bounds the wrong guesses of one address prefix per Window.
	PerAddress int
	// Global bounds the wrong guesses of all prefixes that are not known,
	// together, per Window.
	Global int
	// Window is how long a count lasts from its first wrong guess.
	Window time.Duration
	// KnownFor is how long a prefix that presented the right token is
	// exempt from the global ceiling.
	KnownFor time.Duration
	// MaxAddresses bounds the prefixes the limiter remembers, counted and
	// known together.
	MaxAddresses int
	// TimeSource is the clock windows run on; nil means the system's.
	TimeSource timesource.Source
}

func (c Config) withDefaults() Config {
	if c.PerAddress <= 0 {
		c.PerAddress = DefaultPerAddress
	}
	if c.Global <= 0 {
		c.Global = DefaultGlobal
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.KnownFor <= 0 {
		c.KnownFor = DefaultKnownFor
	}
	if c.MaxAddresses <= 0 {
		c.MaxAddresses = DefaultMaxAddresses
	}
	if c.TimeSource == nil {
		c.TimeSource = timesource.System()
	}
	return c
}

// Outcome is what became of one guess.
type Outcome int

// Outcomes of Limiter.Try.
const (
	// Right: the guess was compared and is the token.
	Right Outcome = iota + 1
	// Wrong: the guess was compared, is not the token, and was counted.
	Wrong
	// Refused: the guess was not compared, because its prefix or the
	// global ceiling is spent; the caller answers 429 with RetryAfter.
	Refused
)

// Scopes of a refusal, the reason labels of the refusals' metric.
const (
	ScopeAddress = "address" // the prefix's own limit
	ScopeGlobal  = "global"  // the global ceiling, or no slot to remember the prefix in
)

// Verdict is the answer to one guess.
type Verdict struct {
	Outcome Outcome
	// RetryAfter is how long until the refusing window ends (Refused
	// only); at least one second.
	RetryAfter time.Duration
	// Scope says which bound refused (Refused only).
	Scope string
}

// Message says what a refused caller should do, for a reply's body.
func (v Verdict) Message() string {
	secs := int64((v.RetryAfter + time.Second - 1) / time.Second)
	if v.Scope == ScopeGlobal {
		return fmt.Sprintf("too many wrong bearer tokens reached this node from many addresses; retry in %d s, or present a client certificate, which is never limited", secs)
	}
	return fmt.Sprintf("too many wrong bearer tokens from your address; retry in %d s with the right token, or present a client certificate, which is never limited", secs)
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, for the
// Retry-After header.
func (v Verdict) RetryAfterSeconds() int64 {
	return int64((v.RetryAfter + time.Second - 1) / time.Second)
}

// window is one count of wrong guesses.
type window struct {
	start time.Duration // monotonic reading of its first wrong guess
	count int
}

// entry is what the limiter remembers of one prefix.
type entry struct {
	window
	known   time.Duration // monotonic reading of its last right token
	isKnown bool          // it presented the right token at known
}

// Limiter counts the guesses of one secret. It is safe for concurrent use.
type Limiter struct {
	cfg    Config
	secret []byte

	mu       sync.Mutex
	byPrefix map[string]*entry
	global   window

	wrong          atomic.Uint64
	refusedAddress atomic.Uint64
	refusedGlobal  atomic.Uint64
}

// New returns a limiter of guesses of secret.
func New(secret string, cfg Config) *Limiter {
	return &Limiter{cfg: cfg.withDefaults(), secret: []byte(secret), byPrefix: make(map[string]*entry)}
}

// Config returns the limiter's configuration, defaults filled in.
func (l *Limiter) Config() Config { return l.cfg }

// Try checks one guess of the secret from remoteAddr (an http.Request's
// RemoteAddr): it refuses the guess uncompared when its prefix, or the
// global ceiling for a prefix that is not known, is spent; otherwise it
// compares the guess in constant time and counts it when wrong, all under
// one lock.
func (l *Limiter) Try(remoteAddr, guess string) Verdict {
	key := Key(remoteAddr)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.cfg.TimeSource.Monotonic()
	e := l.byPrefix[key]
	known := e != nil && e.isKnown && now-e.known < l.cfg.KnownFor
	if e != nil && l.liveLocked(e.window, now) && e.count >= l.cfg.PerAddress {
		l.refusedAddress.Add(1)
		return Verdict{Outcome: Refused, Scope: ScopeAddress, RetryAfter: l.remainingLocked(e.window, now)}
	}
	if !known && l.liveLocked(l.global, now) && l.global.count >= l.cfg.Global {
		l.refusedGlobal.Add(1)
		return Verdict{Outcome: Refused, Scope: ScopeGlobal, RetryAfter: l.remainingLocked(l.global, now)}
	}
	if e == nil {
		if len(l.byPrefix) >= l.cfg.MaxAddresses {
			l.evictLocked(now)
		}
		if len(l.byPrefix) >= l.cfg.MaxAddresses {
			l.refusedGlobal.Add(1)
			return Verdict{Outcome: Refused, Scope: ScopeGlobal, RetryAfter: l.soonestEndLocked(now)}
		}
		e = &entry{}
		l.byPrefix[key] = e
	}
	if subtle.ConstantTimeCompare([]byte(guess), l.secret) == 1 {
		e.known, e.isKnown = now, true
		if !l.liveLocked(e.window, now) {
			e.window = window{}
		}
		return Verdict{Outcome: Right}
	}
	l.wrong.Add(1)
	countLocked(&e.window, now, l.cfg.Window)
	if !known {
		countLocked(&l.global, now, l.cfg.Window)
	}
	return Verdict{Outcome: Wrong}
}

// countLocked counts one wrong guess in w, starting a new window when the
// last one ended.
func countLocked(w *window, now, length time.Duration) {
	if w.count == 0 || now-w.start >= length {
		*w = window{start: now}
	}
	w.count++
}

// liveLocked reports whether w holds a count that has not ended.
func (l *Limiter) liveLocked(w window, now time.Duration) bool {
	return w.count > 0 && now-w.start < l.cfg.Window
}

// remainingLocked is the time until w ends, at least one second.
func (l *Limiter) remainingLocked(w window, now time.Duration) time.Duration {
	return max(w.start+l.cfg.Window-now, time.Second)
}

// evictLocked forgets every prefix whose window ended and that is no longer
// known.
func (l *Limiter) evictLocked(now time.Duration) {
	for k, e := range l.byPrefix {
		if !l.liveLocked(e.window, now) && (!e.isKnown || now-e.known >= l.cfg.KnownFor) {
			delete(l.byPrefix, k)
		}
	}
}

// soonestEndLocked is the time until the first remembered window ends, at
// least one second.
func (l *Limiter) soonestEndLocked(now time.Duration) time.Duration {
	soonest := l.cfg.Window
	for _, e := range l.byPrefix {
		if l.liveLocked(e.window, now) {
			soonest = min(soonest, e.start+l.cfg.Window-now)
		}
	}
	return max(soonest, time.Second)
}

// Remembered returns how many prefixes the limiter holds.
func (l *Limiter) Remembered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byPrefix)
}

// Counts are the limiter's totals since it was made.
type Counts struct {
	Wrong          uint64 // wrong guesses compared
	RefusedAddress uint64 // guesses refused by their prefix's limit
	RefusedGlobal  uint64 // guesses refused by the global ceiling or a full table
}

// Counts returns the limiter's totals.
func (l *Limiter) Counts() Counts {
	return Counts{Wrong: l.wrong.Load(), RefusedAddress: l.refusedAddress.Load(), RefusedGlobal: l.refusedGlobal.Load()}
}

// Key returns the prefix a remote address is counted under: the IPv4
// address (an IPv4-mapped IPv6 address counts as its IPv4 address), or the
// /64 of an IPv6 address, its zone dropped. An address that does not parse
// (no network address at all) is counted under one shared key, so it cannot
// make the table grow.
func Key(remoteAddr string) string {
	var a netip.Addr
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		a = ap.Addr()
	} else if pa, err := netip.ParseAddr(remoteAddr); err == nil {
		a = pa
	} else {
		return "unparsed"
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return netip.PrefixFrom(a, 32).String()
	}
	p, _ := a.Prefix(64) // a is IPv6 here; Prefix fails only on bits > 128
	return p.String()
}
