package grammar

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseLikePattern(t *testing.T) {
	tests := []struct {
		text, want string
		err        string
	}{
		{"web-%", "web-%", ""},
		{"WEB-%", "web-%", ""},
		{"%", "%", ""},
		{"_", "_", ""},
		{`a\_b`, `a\_b`, ""},
		{`a\%`, `a\%`, ""},
		{`\\`, `\\`, ""},
		{"~a-Z_9", "~a-z_9", ""},
		{strings.Repeat("a", MaxLikeLen), strings.Repeat("a", MaxLikeLen), ""},     // at the bound
		{strings.Repeat("a", MaxLikeLen-1), strings.Repeat("a", MaxLikeLen-1), ""}, // just inside
		{strings.Repeat("a", MaxLikeLen+1), "", "longer than 256 bytes"},           // just outside
		{strings.Repeat(`\_`, MaxNameLen), strings.Repeat(`\_`, MaxNameLen), ""},   // a longest name, every character escaped
		{"", "", "the pattern is empty"},
		{`a\`, "", "lone"},
		{`\`, "", "lone"},
		{"a.b", "", "'.' is never"},
		{"a*", "", "character '*'"},
		{"é", "", "character 'é'"},
		{"a\x00", "", `character '\x00'`},
		{"\\\x96", "", `after '\' is never`},
		{`\.`, "", `character '.' after`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseLikePattern(tt.text)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidPattern)
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestMatchLike(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"web-%", "web-1", true},
		{"web-%", "web-", true},
		{"web-%", "web", false},
		{"web-%", "xweb-1", false},
		{"%-1", "web-1", true},
		{"%-1", "web-12", false},
		{"%", "", true},
		{"%", "anything", true},
		{"_", "a", true},
		{"_", "", false},
		{"_", "ab", false},
		{"a_c", "abc", true},
		{"a_c", "ac", false},
		{`a\_c`, "a_c", true},
		{`a\_c`, "abc", false},
		{`a\%`, "a%", true},
		{`a\%`, "ab", false},
		{"%a%b%", "xxaxxbxx", true},
		{"%a%b%", "xxbxxaxx", false},
		{"a%a%a", "aaa", true},
		{"a%a%a", "aa", false},
		{"%%", "", true},
		{"ab", "ab", true},
		{"ab", "abc", false},
		{"abc", "ab", false},
		{"%ab", "aab", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, MatchLike(tt.pattern, tt.name))
			require.Equal(t, tt.want, likeOracle(tt.pattern).MatchString(tt.name), "the oracle agrees")
		})
	}
}

func TestLikePrefix(t *testing.T) {
	for pattern, want := range map[string]string{
		"web-%": "web-", "%": "", "a_b": "a", `a\_b%`: "a_b", "abc": "abc", `a\%b`: "a%b",
	} {
		require.Equal(t, want, LikePrefix(pattern), pattern)
		require.True(t, strings.HasPrefix(strings.ReplaceAll(pattern, `\`, ""), want) || want == "", pattern)
	}
}

// likeOracle translates a stored pattern to an anchored regular
// expression, the definition MatchLike must agree with.
func likeOracle(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '%':
			b.WriteString(`.*`)
		case '_':
			b.WriteString(`.`)
		case '\\':
			i++
			if i < len(pattern) {
				b.WriteString(regexp.QuoteMeta(string(pattern[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// FuzzLikePattern parses any text as a pattern: it never panics, a pattern
// it accepts is within the bounds, lower-case and made of the allowed
// characters, and matching it against a name agrees with the regular
// expression it stands for and with its literal prefix.
func FuzzLikePattern(f *testing.F) {
	for _, seed := range [][2]string{{"web-%", "web-1"}, {`a\_b`, "a_b"}, {"%a%b%", "xaxbx"}, {"_", ""}, {`x\`, "x"}, {"a.b", "a.b"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, text, name string) {
		p, err := ParseLikePattern(text)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidPattern)
			return
		}
		require.NotEmpty(t, p)
		require.LessOrEqual(t, len(p), MaxLikeLen)
		require.Equal(t, strings.ToLower(p), p)
		if len(name) > 4*MaxNameLen {
			name = name[:4*MaxNameLen]
		}
		got := MatchLike(p, name)
		require.Equal(t, likeOracle(p).MatchString(name), got, "pattern %q name %q", p, name)
		if got {
			require.True(t, strings.HasPrefix(name, LikePrefix(p)))
		}
	})
}
