package grammar

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var durationCases = []struct {
	text string
	want uint64
	err  string // substring of the error; "" means success
}{
	{"0", 0, ""},
	{"0s", 0, ""},
	{"1ns", 1, ""},
	{"250ms", 250 * Millisecond, ""},
	{"1h30m", Hour + 30*Minute, ""},
	{"1.5s", 1500 * Millisecond, ""},
	{"0.000000001s", 1, ""},
	{"0.0000000009s", 0, ""}, // below 1ns truncates toward zero
	{"1.9ns", 1, ""},
	{".5s", 500 * Millisecond, ""},
	{"5.s", 5 * Second, ""},
	{"1s1s", 2 * Second, ""},
	{"2nsec3nanos", 5, ""},
	{"1us1usec", 2 * Microsecond, ""},
	{"1msec1millis", 2 * Millisecond, ""},
	{"1sec1secs1second1seconds", 4 * Second, ""},
	{"1min1mins1minute1minutes", 4 * Minute, ""},
	{"1hr1hrs1hour1hours", 4 * Hour, ""},
	{"1d1day1days", 3 * Day, ""},
	{"1w1wk1wks1week1weeks", 5 * Week, ""},
	{"1M", 2630016 * Second, ""},
	{"1month2months", 3 * 2630016 * Second, ""},
	{"1y1year1years", 3 * 31557600 * Second, ""},
	{"1m", Minute, ""},
	{"0.5M", 1315008 * Second, ""},
	{"0.25y", 7889400 * Second, ""},
	{"0001s", Second, ""},
	{"1.000000000000000000000000000001s", Second, ""},
	{"0.99999999999999999999999999999999999ns", 0, ""},
	{"0.333333333333333333333333333333333333h", 1199999999999, ""},
	// The 64-bit boundary: at, just inside, just outside.
	{"18446744073709551615ns", math.MaxUint64, ""},
	{"18446744073709551614ns", math.MaxUint64 - 1, ""},
	{"18446744073709551616ns", 0, "add up past 18446744073709551615ns"},
	{"18446744073709551614ns1ns", math.MaxUint64, ""},
	{"18446744073709551615ns1ns", 0, "add up past"},
	{"18446744073.709551615s", math.MaxUint64, ""},
	{"18446744073.709551616s", 0, "add up past"},
	{"5124095h34m33s709ms551us615ns", math.MaxUint64, ""},
	{"5124095h34m33s709ms551us616ns", 0, "add up past"},
	{"585y", 0, "add up past"},
	{"99999999999999999999999ns", 0, "add up past"},
	{"18446744073709551615s", 0, "add up past"},
	{"", 0, "empty duration"},
	{"5", 0, "missing unit after '5'"},
	{"1h5", 0, "missing unit after '5'"},
	{"-1s", 0, "cannot be negative"},
	{"1x", 0, "unknown unit 'x'"},
	{"1S", 0, "unknown unit 'S'"},
	{"1H", 0, "unknown unit 'H'"},
	{"s", 0, "expected a number at 's'"},
	{"1e5s", 0, "unknown unit 'e'"},
	{"1..5s", 0, "missing unit"},
	{"1s ", 0, "expected a number at ' '"},
}

func TestParseDuration(t *testing.T) {
	for _, tc := range durationCases {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseDuration(tc.text)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidDuration)
				require.ErrorContains(t, err, tc.err)
				require.True(t, strings.HasPrefix(err.Error(), "invalid duration "+quote(tc.text)+": "), err.Error())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.want, refDuration(t, tc.text))
		})
	}
}

func TestFormatDurationRoundTrip(t *testing.T) {
	for _, ns := range []uint64{0, 1, 999, 1000, Second, 1500 * Millisecond, Hour + 30*Minute, Month, Year, math.MaxUint64, math.MaxUint64 - 1} {
		text := FormatDuration(ns)
		got, err := ParseDuration(text)
		require.NoError(t, err, text)
		require.Equal(t, ns, got, text)
	}
	require.Equal(t, "1h30m", FormatDuration(Hour+30*Minute))
	require.Equal(t, "1s500ms", FormatDuration(1500*Millisecond))
	require.Equal(t, "0s", FormatDuration(0))
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ns := r.Uint64() >> r.UintN(64)
		got, err := ParseDuration(FormatDuration(ns))
		require.NoError(t, err)
		require.Equal(t, ns, got)
	}
}

// refDuration is the math/big reference: each span's exact rational value
// truncated toward zero, summed without bound.
func refDuration(t testing.TB, text string) uint64 {
	v, ok := refDurationBig(text)
	require.True(t, ok, "reference rejects %q", text)
	require.True(t, v.IsUint64(), "reference overflows for %q", text)
	return v.Uint64()
}

func refDurationBig(text string) (*big.Int, bool) {
	if text == "0" {
		return new(big.Int), true
	}
	total := new(big.Int)
	rest := text
	if rest == "" {
		return nil, false
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
		if i <= 0 {
			return nil, false
		}
		num := rest[:i]
		j := strings.IndexFunc(rest[i:], func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
		if j < 0 {
			j = len(rest) - i
		}
		unit, ok := durationUnits[rest[i:i+j]]
		if !ok || strings.Count(num, ".") > 1 || num == "." {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			return nil, false
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(unit)))
		total.Add(total, new(big.Int).Quo(r.Num(), r.Denom()))
		rest = rest[i+j:]
	}
	return total, true
}

// TestDurationMatchesBig compares random span sums with the math/big
// reference, including sums that land near and past the 64-bit limit.
func TestDurationMatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	units := make([]string, 0, len(durationUnits))
	for u := range durationUnits {
		units = append(units, u)
	}
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(strconv.FormatUint(r.Uint64()>>r.UintN(64), 10))
			if r.IntN(3) == 0 {
				b.WriteByte('.')
				for range r.IntN(25) {
					b.WriteByte(byte('0' + r.IntN(10)))
				}
			}
			b.WriteString(units[r.IntN(len(units))])
		}
		checkAgainstBig(t, b.String())
	}
}

func checkAgainstBig(t *testing.T, text string) {
	t.Helper()
	got, err := ParseDuration(text)
	want, ok := refDurationBig(text)
	if !ok {
		require.Error(t, err, text)
		return
	}
	if !want.IsUint64() {
		require.ErrorIs(t, err, ErrInvalidDuration, text)
		require.ErrorContains(t, err, "add up past", text)
		return
	}
	require.NoError(t, err, text)
	require.Equal(t, want.Uint64(), got, text)
}

func FuzzParseDuration(f *testing.F) {
	for _, tc := range durationCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkAgainstBig(t, text)
	})
}

// TestLongFractionsAreExactAndCheap holds that a fraction of any length is
// converted exactly, in linear time and without allocating: a fraction of a
// client message's million digits used to go through math/big's quadratic
// decimal conversion and took over a second.
func TestLongFractionsAreExactAndCheap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{18, 19, 20, 40, 1000, 20_000} {
		for _, unit := range []string{"ns", "s", "M", "y"} {
			var b strings.Builder
			b.WriteString(strconv.Itoa(r.IntN(500)))
			b.WriteByte('.')
			for range n {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			b.WriteString(unit)
			checkAgainstBig(t, b.String())
		}
	}
	// All nines never round up: 0.9…9y is Year − ceil(Year × 10^-n), and a
	// year is 3.15576e16ns, so from 17 nines on it is one nanosecond short.
	for n, want := range map[int]uint64{16: Year - 4, 17: Year - 1, 30: Year - 1, 200_000: Year - 1} {
		got, err := ParseDuration("0." + strings.Repeat("9", n) + "y")
		require.NoError(t, err)
		require.Equal(t, want, got, "%d nines", n)
	}
	long := "1." + strings.Repeat("123456789", 20_000) + "y"
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := ParseDuration(long); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
