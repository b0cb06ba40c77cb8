package grammar

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var rateCases = []struct {
	text string
	want float64
	err  string
}{
	{"1", 1, ""},
	{"60", 60, ""},
	{"0.5", 0.5, ""},
	{".5", 0.5, ""},
	{"+2", 2, ""},
	{"1e3", 1000, ""},
	// Smallest positive float64 (subnormal): at, just inside, just outside.
	{"5e-324", math.SmallestNonzeroFloat64, ""},
	{"4.9406564584124654e-324", math.SmallestNonzeroFloat64, ""},
	{"1e-323", 2 * math.SmallestNonzeroFloat64, ""},
	{"2e-324", 0, "underflows to zero"},
	{"1e-400", 0, "underflows to zero"},
	// Largest float64: at, just inside, just outside.
	{"1.7976931348623157e308", math.MaxFloat64, ""},
	{"1.7976931348623157E+308", math.MaxFloat64, ""},
	{"1.7976931348623158e308", math.MaxFloat64, ""}, // rounds down to the maximum
	{"1.7976931348623155e308", math.Nextafter(math.MaxFloat64, 0), ""},
	{"1.7976931348623159e308", 0, "overflows float64"},
	{"1e309", 0, "overflows float64"},
	{"0", 0, "must be positive, not zero"},
	{"0.0", 0, "must be positive, not zero"},
	{"0e10", 0, "must be positive, not zero"},
	{"-0", 0, "must be positive"},
	{"-1", 0, "must be positive"},
	{"-5e-324", 0, "must be positive"},
	{"NaN", 0, "not a number"},
	{"nan", 0, "not a number"},
	{"Inf", 0, "infinite"},
	{"-Infinity", 0, "infinite"},
	{"+inf", 0, "infinite"},
	{"", 0, "not a decimal number"},
	{"fast", 0, "not a decimal number"},
	{"0x1p-2", 0, "not a decimal number"},
	{"1_000", 0, "not a decimal number"},
	{"1e", 0, "not a decimal number"},
	{"1.2.3", 0, "not a decimal number"},
	{" 1", 0, "not a decimal number"},
}

func TestParseRate(t *testing.T) {
	for _, tc := range rateCases {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseRate(tc.text)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidRate)
				require.ErrorContains(t, err, tc.err)
				require.True(t, strings.HasPrefix(err.Error(), "invalid time rate "+quote(tc.text)+": "), err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			back, err := ParseRate(FormatRate(got))
			require.NoError(t, err)
			require.Equal(t, got, back)
		})
	}
}

func FuzzParseRate(f *testing.F) {
	for _, tc := range rateCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseRate(text)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidRate)
			return
		}
		require.True(t, got > 0 && !math.IsInf(got, 0) && !math.IsNaN(got), "%q gave %v", text, got)
		ref, perr := strconv.ParseFloat(text, 64)
		require.NoError(t, perr)
		require.Equal(t, ref, got)
		back, err := ParseRate(FormatRate(got))
		require.NoError(t, err)
		require.Equal(t, got, back)
	})
}
