package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuote pins how an error message repeats offending text: in single
// quotes with a quote doubled, control characters and invalid UTF-8
// escaped, and at most maxQuoted characters (runes, not bytes) before an
// ellipsis, so a message stays one readable line.
func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "prod", "'prod'"},
		{"empty", "", "''"},
		{"quote doubled", "it's", "'it''s'"},
		{"control character", "a\nb", `'a\x0ab'`},
		{"delete", "a\x7fb", `'a\x7fb'`},
		{"invalid UTF-8", "a\xffb", `'a\xffb'`},
		{"exactly the limit", strings.Repeat("a", maxQuoted), "'" + strings.Repeat("a", maxQuoted) + "'"},
		{"one past the limit", strings.Repeat("a", maxQuoted+1), "'" + strings.Repeat("a", maxQuoted) + "…'"},
		{"runes, not bytes", strings.Repeat("é", maxQuoted+5), "'" + strings.Repeat("é", maxQuoted) + "…'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, quote(tc.in))
		})
	}
	// A parse error repeats a long literal shortened.
	long := strings.Repeat("9", 200) + "x"
	_, err := ParseDuration(long)
	require.ErrorIs(t, err, ErrInvalidDuration)
	require.Contains(t, err.Error(), "'"+strings.Repeat("9", maxQuoted)+"…'")
	require.NotContains(t, err.Error(), strings.Repeat("9", maxQuoted+1))
}
