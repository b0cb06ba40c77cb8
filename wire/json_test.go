package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzJSONString checks that every string, valid UTF-8 or not, encodes to
// valid JSON that decodes back to the string (invalid bytes as U+FFFD).
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "prod", "a\"b\\c", "\x00\x1f\x7f", "é\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		require.True(t, json.Valid(b), "%q -> %s", s, b)
		var back string
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, []rune(string([]rune(s))), []rune(back))
	})
}
