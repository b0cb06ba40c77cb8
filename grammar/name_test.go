package grammar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseName(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen)
	for _, tc := range []struct {
		text, want, err string
	}{
		{"prod", "prod", ""},
		{"Prod", "prod", ""},
		{"A", "a", ""}, // each end of the upper-case letters alone
		{"Z", "z", ""},
		{"ABC", "abc", ""},
		{"_x9", "_x9", ""},
		{"`prod-1~a_B`", "prod-1~a_b", ""},
		{"`9lives`", "9lives", ""},
		{"`clock`", "clock", ""},
		{"a", "a", ""},
		{long, long, ""},
		{"`" + long + "`", long, ""},
		{long + "a", "", "longer than 128 bytes"},
		{"`" + long + "a`", "", "longer than 128 bytes"},
		{"``", "", "cannot be empty"},
		{"`a.b`", "", "cannot contain '.'"},
		{"`a b`", "", "character ' ' is not allowed"},
		{"`é`", "", "character 'é' is not allowed"},
		{"`a``b`", "", "character '`' is not allowed"},
		{"`", "", "character '`' is not allowed"},   // one backtick quotes nothing
		{"ab`", "", "character '`' is not allowed"}, // quoted only when both ends are backticks
		{"`ab", "", "character '`' is not allowed"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseName(tc.text)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidName)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			back, err := ParseName(FormatName(got))
			require.NoError(t, err)
			require.Equal(t, got, back)
		})
	}
}

func TestFormatName(t *testing.T) {
	for name, want := range map[string]string{
		"prod":   "prod",
		"_x":     "_x",
		"zz":     "zz",
		"az9":    "az9",
		"prod-1": "`prod-1`",
		"9a":     "`9a`",
		"clock":  "`clock`",
		"start":  "`start`",
		"a~b":    "`a~b`",
	} {
		require.Equal(t, want, FormatName(name), name)
	}
}
