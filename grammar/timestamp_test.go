package grammar

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var timestampCases = []struct {
	text string
	want int64
	err  string
}{
	{"1970-01-01T00:00:00Z", 0, ""},
	{"2026-01-01T00:00:00Z", 1767225600 * 1e9, ""},
	{"2026-01-01t00:00:00z", 1767225600 * 1e9, ""},
	{"2026-01-01T01:00:00+01:00", 1767225600 * 1e9, ""},
	{"2025-12-31T19:30:00-04:30", 1767225600 * 1e9, ""},
	{"2026-01-01T23:00:00+23:59", 1767222060 * 1e9, ""}, // the largest offset
	{"2026-01-01T00:00:00.5Z", 1767225600*1e9 + 5e8, ""},
	{"2026-01-01T00:00:00.123456789Z", 1767225600*1e9 + 123456789, ""},
	{"2026-01-01T00:00:00.1234567899999Z", 1767225600*1e9 + 123456789, ""}, // truncated, not rounded
	{"1969-12-31T23:59:59.999999999Z", -1, ""},
	{"1969-12-31T23:59:59.9999999999Z", -1, ""},
	// Leap second: one second past the second before it.
	{"2016-12-31T23:59:60Z", 1483228800 * 1e9, ""},
	{"2016-12-31T23:59:60.5Z", 1483228800*1e9 + 5e8, ""},
	{"2017-01-01T00:59:60+01:00", 1483228800 * 1e9, ""},
	{"2000-02-29T00:00:00Z", 951782400 * 1e9, ""},
	// The signed Unix nanosecond range: at, just inside, just outside.
	{MinTimestampText, math.MinInt64, ""},
	{"1677-09-21T00:12:43.145224193Z", math.MinInt64 + 1, ""},
	{"1677-09-21T00:12:43.145224191Z", 0, "outside the signed Unix-nanosecond range"},
	{"1677-09-21T00:12:43.1452241919Z", 0, "outside the signed Unix-nanosecond range"},
	{"1677-09-21T00:12:43.1452241920Z", math.MinInt64, ""},
	{"1677-09-21T01:12:43.145224192+01:00", math.MinInt64, ""},
	{"1677-09-20T23:12:43.145224192-01:00", math.MinInt64, ""},
	{"1677-09-21T00:12:43.145224192+00:01", 0, "outside the signed Unix-nanosecond range"},
	{MaxTimestampText, math.MaxInt64, ""},
	{"2262-04-11T23:47:16.854775806Z", math.MaxInt64 - 1, ""},
	{"2262-04-11T23:47:16.854775808Z", 0, "outside the signed Unix-nanosecond range"},
	{"2262-04-11T23:47:16.8547758079999Z", math.MaxInt64, ""},
	{"2262-04-11T23:46:76.854775807Z", 0, "second out of range"},
	{"2262-04-11T23:47:16.854775807-00:01", 0, "outside the signed Unix-nanosecond range"},
	{"2262-04-12T00:47:16.854775807+01:00", math.MaxInt64, ""},
	{"0000-01-01T00:00:00Z", 0, "outside the signed Unix-nanosecond range"},
	{"9999-12-31T23:59:60Z", 0, "outside the signed Unix-nanosecond range"},
	// Malformed text.
	{"", 0, "too short"},
	{"2026-01-01", 0, "too short"},
	{"2026-01-01 00:00:00Z", 0, "not in the form"},
	{"2026/01/01T00:00:00Z", 0, "not in the form"},
	// Each field and separator on its own.
	{"202x-01-01T00:00:00Z", 0, "not in the form"},
	{"2026-0x-01T00:00:00Z", 0, "not in the form"},
	{"2026-01-0xT00:00:00Z", 0, "not in the form"},
	{"2026-01-01T0x:00:00Z", 0, "not in the form"},
	{"2026-01-01T00:0x:00Z", 0, "not in the form"},
	{"2026-01-01T00:00:0xZ", 0, "not in the form"},
	{"2026x01-01T00:00:00Z", 0, "not in the form"},
	{"2026-01x01T00:00:00Z", 0, "not in the form"},
	{"2026-01-01x00:00:00Z", 0, "not in the form"},
	{"2026-01-01T00x00:00Z", 0, "not in the form"},
	{"2026-01-01T00:00x00Z", 0, "not in the form"},
	{"2026-1-01T00:00:00Z", 0, "too short"},
	{"2026-1-01T00:00:00.5Z", 0, "not in the form"},
	{"2026-13-01T00:00:00Z", 0, "month out of range"},
	{"2026-00-01T00:00:00Z", 0, "month out of range"},
	{"2026-02-29T00:00:00Z", 0, "day out of range"},
	{"1900-02-29T00:00:00Z", 0, "day out of range"},
	{"2026-04-31T00:00:00Z", 0, "day out of range"},
	{"2026-01-00T00:00:00Z", 0, "day out of range"},
	{"2026-01-01T24:00:00Z", 0, "hour out of range"},
	{"2026-01-01T00:60:00Z", 0, "minute out of range"},
	{"2026-01-01T00:00:61Z", 0, "second out of range"},
	{"2026-01-01T00:00:00", 0, "too short"},
	{"2026-01-01T00:00:00.Z", 0, "fraction digits"},
	{"2026-01-01T00:00:00.5", 0, "missing time zone"},
	{"2026-01-01T00:00:00+0100", 0, "malformed time zone"},
	{"2026-01-01T00:00:00+24:00", 0, "offset out of range"},
	{"2026-01-01T00:00:00+01:60", 0, "offset out of range"},
	{"2026-01-01T00:00:00+0a:00", 0, "malformed offset"},
	{"2026-01-01T00:00:00ZZ", 0, "malformed time zone"},
	{"2026-01-01T00:00:00 Z", 0, "malformed time zone"},
}

func TestParseTimestamp(t *testing.T) {
	for _, tc := range timestampCases {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseTimestamp(tc.text)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidTimestamp)
				require.ErrorContains(t, err, tc.err)
				require.True(t, strings.HasPrefix(err.Error(), "invalid timestamp "+quote(tc.text)+": "), err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestFormatTimestampRoundTrip(t *testing.T) {
	for _, ns := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, 5e8, 1767225600 * 1e9, math.MaxInt64 - 1, math.MaxInt64} {
		text := FormatTimestamp(ns)
		got, err := ParseTimestamp(text)
		require.NoError(t, err, text)
		require.Equal(t, ns, got, text)
	}
	require.Equal(t, MinTimestampText, FormatTimestamp(math.MinInt64))
	require.Equal(t, MaxTimestampText, FormatTimestamp(math.MaxInt64))
	require.Equal(t, "2026-01-01T00:00:00Z", FormatTimestamp(1767225600*1e9))
	require.Equal(t, "2026-01-01T00:00:00.5Z", FormatTimestamp(1767225600*1e9+5e8))
}

// FuzzParseTimestamp checks ParseTimestamp against time.Parse and an exact
// math/big nanosecond count: wherever time.Parse accepts the text, the two
// agree on the instant, and the result is refused exactly when that
// instant leaves the int64 range.
func FuzzParseTimestamp(f *testing.F) {
	for _, tc := range timestampCases {
		f.Add(tc.text)
	}
	minBig, maxBig := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseTimestamp(text)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidTimestamp)
		}
		ref, perr := time.Parse(time.RFC3339Nano, text)
		if perr != nil || lenientOffset(text) || !strictShape(text) {
			return
		}
		// time.Parse keeps every fraction digit and rounds nothing;
		// compute its instant exactly, truncated to nanoseconds.
		exact := new(big.Int).Mul(big.NewInt(ref.Unix()), big.NewInt(1e9))
		exact.Add(exact, big.NewInt(int64(ref.Nanosecond())))
		if exact.Cmp(minBig) < 0 || exact.Cmp(maxBig) > 0 {
			require.Error(t, err, text)
			return
		}
		require.NoError(t, err, text)
		require.Equal(t, exact.Int64(), got, text)
	})
}

// lenientOffset reports an offset time.Parse accepts but RFC 3339 does not
// (hour 24, minute 60).
func lenientOffset(text string) bool {
	if len(text) < 6 {
		return false
	}
	off := text[len(text)-6:]
	return (off[0] == '+' || off[0] == '-') && (off[1:3] > "23" || off[4:6] > "59")
}

// strictShape reports whether text has RFC 3339's two-digit fields where
// time.Parse would also take one digit, and a '.' before a fraction
// where time.Parse also takes ','.
func strictShape(text string) bool {
	if len(text) < 20 || strings.Contains(text, ",") {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if !isDigit(text[i]) {
			return false
		}
	}
	return true
}
