package console

import (
	"strings"
	"testing"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/stretchr/testify/require"
)

func fuzzConsole(t testing.TB) *Console {
	t.Helper()
	return &Console{cfg: Config{Key: []byte(strings.Repeat("k", 32)), LoginLifetime: DefaultLoginLifetime, TimeSource: timesource.NewFake(1e18)},
		logouts: &logouts{ids: map[string]int64{}}}
}

// FuzzLoginCookie: any cookie value parses without a panic, and a login
// cookie the console minted is refused once any byte of it changes.
func FuzzLoginCookie(f *testing.F) {
	c := fuzzConsole(f)
	minted, _, _ := c.loginCookie()
	f.Add(minted, 0, byte(1))
	f.Add("", 0, byte(0))
	f.Add("AAAA", 3, byte(0x80))
	f.Fuzz(func(t *testing.T, value string, pos int, flip byte) {
		c.parseLoginCookie(value) // must not panic
		_, _, ok := c.parseLoginCookie(minted)
		require.True(t, ok)
		if flip == 0 || len(minted) == 0 {
			return
		}
		b := []byte(minted)
		i := (pos%len(b) + len(b)) % len(b)
		b[i] ^= flip
		if string(b) == minted {
			return
		}
		_, _, ok = c.parseLoginCookie(string(b))
		require.False(t, ok, "a cookie with byte %d changed was accepted", i)
	})
}

// FuzzFailureCaret: an error at any position of any text is shown without
// a panic, the caret line is the source line's width up to the column.
func FuzzFailureCaret(f *testing.F) {
	f.Add("LIST DOMAINS;\nSTAR;", 2, 1)
	f.Add("\tUSE é;", 1, 6)
	f.Add("", 0, -3)
	f.Fuzz(func(t *testing.T, text string, line, col int) {
		fl := newFailure(text, &grammar.Error{Pos: grammar.Position{Line: line, Column: col}, Msg: "m"})
		if fl.Caret != "" {
			require.True(t, strings.HasSuffix(fl.Caret, "^"))
			require.NotContains(t, fl.Source, "\n")
		}
	})
}
