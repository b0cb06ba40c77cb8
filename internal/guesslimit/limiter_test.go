package guesslimit_test

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/internal/guesslimit"
	"github.com/stretchr/testify/require"
)

const secret = "the-right-token"

func newLimiter(cfg guesslimit.Config) (*guesslimit.Limiter, *timesource.Fake) {
	clock := timesource.NewFake(0)
	cfg.TimeSource = clock
	return guesslimit.New(secret, cfg), clock
}

// TestDefaults: the production defaults are the documented bounds.
func TestDefaults(t *testing.T) {
	cfg := guesslimit.New(secret, guesslimit.Config{}).Config()
	require.Equal(t, 10, cfg.PerAddress)
	require.Equal(t, 100, cfg.Global)
	require.Equal(t, time.Minute, cfg.Window)
	require.Equal(t, 24*time.Hour, cfg.KnownFor)
	require.Equal(t, 4096, cfg.MaxAddresses)
}

// TestPerAddressLimit: an address prefix gets PerAddress wrong guesses a
// window; past them even the right token is refused, uncompared, with the
// time until the window ends; a new window admits it again.
func TestPerAddressLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wrong  int // wrong guesses before the probe
		probe  string
		expect guesslimit.Outcome
	}{
		{"inside: the right token after limit-1 wrong", 9, secret, guesslimit.Right},
		{"inside: a wrong token after limit-1 wrong is compared", 9, "nope", guesslimit.Wrong},
		{"at: the right token after limit wrong is refused", 10, secret, guesslimit.Refused},
		{"outside: a wrong token after limit wrong is refused", 10, "nope", guesslimit.Refused},
		{"outside: limit+1 wrong before", 11, secret, guesslimit.Refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := newLimiter(guesslimit.Config{})
			for i := 0; i < tc.wrong; i++ {
				v := l.Try("192.0.2.1:4000", "nope")
				if i < 10 {
					require.Equal(t, guesslimit.Wrong, v.Outcome, "guess %d", i+1)
				}
			}
			clock.Advance(20 * time.Second)
			v := l.Try("192.0.2.1:4001", tc.probe)
			require.Equal(t, tc.expect, v.Outcome)
			if tc.expect == guesslimit.Refused {
				require.Equal(t, guesslimit.ScopeAddress, v.Scope)
				require.Equal(t, 40*time.Second, v.RetryAfter)
				require.Equal(t, int64(40), v.RetryAfterSeconds())
				require.Contains(t, v.Message(), "retry in 40 s")
				require.Contains(t, v.Message(), "client certificate")
				// Another address is not refused.
				require.Equal(t, guesslimit.Right, l.Try("192.0.2.2:4000", secret).Outcome)
				// One nanosecond before the window ends it still refuses,
				// at its end the right token is admitted again.
				clock.Advance(40*time.Second - 1)
				require.Equal(t, guesslimit.Refused, l.Try("192.0.2.1:4000", secret).Outcome)
				require.Equal(t, time.Second, l.Try("192.0.2.1:4000", secret).RetryAfter, "at least one second")
				clock.Advance(1)
				require.Equal(t, guesslimit.Right, l.Try("192.0.2.1:4000", secret).Outcome)
			}
		})
	}
}

// TestCountsDoNotLeakAcrossWindows: a window counts from its first wrong
// guess; guesses of an ended window do not count in the next.
func TestCountsDoNotLeakAcrossWindows(t *testing.T) {
	l, clock := newLimiter(guesslimit.Config{})
	for i := 0; i < 9; i++ {
		require.Equal(t, guesslimit.Wrong, l.Try("192.0.2.1:1", "nope").Outcome)
	}
	clock.Advance(time.Minute)
	for i := 0; i < 10; i++ {
		require.Equal(t, guesslimit.Wrong, l.Try("192.0.2.1:1", "nope").Outcome, "guess %d of the new window", i+1)
	}
	require.Equal(t, guesslimit.Refused, l.Try("192.0.2.1:1", "nope").Outcome)
}

// TestConcurrentWrongGuessesAreCheckedOnce: a burst of concurrent wrong
// guesses from one address gets exactly PerAddress comparisons.
func TestConcurrentWrongGuessesAreCheckedOnce(t *testing.T) {
	l, _ := newLimiter(guesslimit.Config{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[guesslimit.Outcome]int{}
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := l.Try("192.0.2.1:1", "nope")
			mu.Lock()
			got[v.Outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, map[guesslimit.Outcome]int{guesslimit.Wrong: 10, guesslimit.Refused: 90}, got)
	require.Equal(t, guesslimit.Counts{Wrong: 10, RefusedAddress: 90}, l.Counts())
}

// TestIPv6CountsByPrefix: every address of one /64 shares one count; the
// next /64 has its own.
func TestIPv6CountsByPrefix(t *testing.T) {
	l, _ := newLimiter(guesslimit.Config{})
	for i := 0; i < 10; i++ {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i + 1)})
		require.Equal(t, guesslimit.Wrong, l.Try(netip.AddrPortFrom(a, 1).String(), "nope").Outcome)
	}
	require.Equal(t, guesslimit.Refused, l.Try("[2001:db8::ffff:ffff:ffff:ffff]:9", secret).Outcome)
	require.Equal(t, guesslimit.Right, l.Try("[2001:db8:0:1::1]:9", secret).Outcome)
}

// TestGlobalCeiling: prefixes that are not known share Global wrong
// guesses a window; a known prefix is not refused by it.
func TestGlobalCeiling(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wrong  int // wrong guesses, one from each of as many addresses
		expect guesslimit.Outcome
	}{
		{"inside", 2, guesslimit.Right},
		{"at", 3, guesslimit.Refused},
		{"outside", 4, guesslimit.Refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, clock := newLimiter(guesslimit.Config{Global: 3})
			require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:1", secret).Outcome, "the operator's address becomes known")
			for i := 0; i < tc.wrong; i++ {
				a := netip.AddrFrom4([4]byte{203, 0, 113, byte(i)})
				v := l.Try(netip.AddrPortFrom(a, 1).String(), "nope")
				if i < 3 {
					require.Equal(t, guesslimit.Wrong, v.Outcome)
				} else {
					require.Equal(t, guesslimit.Refused, v.Outcome)
				}
			}
			clock.Advance(time.Second)
			v := l.Try("203.0.113.200:1", secret)
			require.Equal(t, tc.expect, v.Outcome, "a new address with the right token")
			if tc.expect == guesslimit.Refused {
				require.Equal(t, guesslimit.ScopeGlobal, v.Scope)
				require.Equal(t, 59*time.Second, v.RetryAfter)
				require.Contains(t, v.Message(), "many addresses")
			}
			// The known operator is never refused by the ceiling, and its
			// wrong guesses are still only its own.
			require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:2", secret).Outcome)
			require.Equal(t, guesslimit.Wrong, l.Try("198.51.100.7:2", "typo").Outcome)
			require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:2", secret).Outcome)
		})
	}
}

// TestKnownExpires: a prefix is known for KnownFor after its last right
// token, then the global ceiling refuses it like any other.
func TestKnownExpires(t *testing.T) {
	l, clock := newLimiter(guesslimit.Config{Global: 1, KnownFor: time.Hour, Window: 10 * time.Hour})
	require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:1", secret).Outcome)
	require.Equal(t, guesslimit.Wrong, l.Try("203.0.113.1:1", "nope").Outcome)
	clock.Advance(time.Hour - 1)
	require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:1", secret).Outcome, "just inside KnownFor")
	clock.Advance(time.Hour - 1)
	require.Equal(t, guesslimit.Right, l.Try("198.51.100.7:1", secret).Outcome, "the last right token renewed it")
	clock.Advance(time.Hour)
	v := l.Try("198.51.100.7:1", secret)
	require.Equal(t, guesslimit.Refused, v.Outcome, "at KnownFor after the last right token")
	require.Equal(t, guesslimit.ScopeGlobal, v.Scope)
}

// TestMemoryIsBounded: the limiter remembers at most MaxAddresses
// prefixes; ended windows are forgotten to make room, and with every slot
// live a new prefix is refused rather than remembered.
func TestMemoryIsBounded(t *testing.T) {
	l, clock := newLimiter(guesslimit.Config{MaxAddresses: 3})
	for i := 0; i < 3; i++ {
		require.Equal(t, guesslimit.Wrong, l.Try(netip.AddrPortFrom(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), 1).String(), "nope").Outcome)
	}
	require.Equal(t, 3, l.Remembered())
	v := l.Try("203.0.113.9:1", "nope")
	require.Equal(t, guesslimit.Refused, v.Outcome, "a fourth prefix while three windows live")
	require.Equal(t, guesslimit.ScopeGlobal, v.Scope)
	require.Equal(t, time.Minute, v.RetryAfter)
	require.Equal(t, 3, l.Remembered())
	clock.Advance(time.Minute)
	require.Equal(t, guesslimit.Wrong, l.Try("203.0.113.9:1", "nope").Outcome)
	require.Equal(t, 1, l.Remembered(), "the ended windows were forgotten")
}

// TestKey: the prefix each form of remote address is counted under.
func TestKey(t *testing.T) {
	for _, tc := range []struct{ addr, key string }{
		{"192.0.2.1:4000", "192.0.2.1/32"},
		{"192.0.2.1", "192.0.2.1/32"},
		{"127.0.0.1:1", "127.0.0.1/32"},
		{"127.0.0.2:1", "127.0.0.2/32"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1/32"},
		{"[2001:db8::1]:443", "2001:db8::/64"},
		{"[2001:db8::ffff:ffff:ffff:ffff]:443", "2001:db8::/64"},
		{"[2001:db8:0:1::]:443", "2001:db8:0:1::/64"},
		{"[fe80::1%eth0]:1", "fe80::/64"},
		{"[::1]:1", "::/64"},
		{"pipe", "unparsed"},
		{"", "unparsed"},
		{"[2001:db8::1]", "unparsed"},
	} {
		require.Equal(t, tc.key, guesslimit.Key(tc.addr), tc.addr)
	}
}

// FuzzKey: any remote address text keys to the shared "unparsed" key or
// to a /32 or /64 prefix, never panicking.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"192.0.2.1:4000", "[2001:db8::1]:443", "[::ffff:1.2.3.4]:1", "[fe80::1%eth0]:1", "pipe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		k := guesslimit.Key(addr)
		if k == "unparsed" {
			return
		}
		p, err := netip.ParsePrefix(k)
		require.NoError(t, err, "%q keyed as %q", addr, k)
		require.Equal(t, p, p.Masked())
		if p.Addr().Is4() {
			require.Equal(t, 32, p.Bits())
		} else {
			require.Equal(t, 64, p.Bits())
		}
	})
}
