package literal

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFormatName: a name is bare when it is a word that is no keyword in
// any case, backtick-quoted otherwise.
func TestFormatName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"prod", "prod"},
		{"prod_1", "prod_1"},
		{"prod-1", "`prod-1`"},
		{"1prod", "`1prod`"},
		{"clock", "`clock`"},
		{"transactions", "`transactions`"},
		{"a~b", "`a~b`"},
		{"", "``"},
	} {
		require.Equal(t, tc.want, FormatName(tc.name), tc.name)
	}
}

// TestKeywords: the list is sorted upper case, and every keyword is found
// in any case and nothing else is.
func TestKeywords(t *testing.T) {
	kws := Keywords()
	require.True(t, slices.IsSorted(kws))
	for _, k := range kws {
		got, ok := LookupKeyword(k)
		require.True(t, ok, k)
		require.Equal(t, k, got)
	}
	got, ok := LookupKeyword("tRaNsAcTiOnS")
	require.True(t, ok)
	require.Equal(t, "TRANSACTIONS", got)
	for _, w := range []string{"", "prod", "transactionss", "TRANSACTIO"} {
		_, ok := LookupKeyword(w)
		require.False(t, ok, w)
	}
	kws[0] = "changed"
	require.Equal(t, "ALL", Keywords()[0], "Keywords returns a copy")
}

// TestFormatLiterals: durations, timestamps and rates in their canonical
// text (grammar's tests read every one back).
func TestFormatLiterals(t *testing.T) {
	require.Equal(t, "0s", FormatDuration(0))
	require.Equal(t, "1m0.25s", FormatDuration(Minute+250*Millisecond))
	require.Equal(t, "1.5ms", FormatDuration(1500*Microsecond))
	require.Equal(t, "5124095h34m33.709551615s", FormatDuration(math.MaxUint64))
	require.Equal(t, "2262-04-11T23:47:16.854775807Z", FormatTimestamp(math.MaxInt64))
	require.Equal(t, "1.7976931348623157e+308", FormatRate(math.MaxFloat64))
}
