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
	// Spans are added exactly; only the sum is floored.
	{"0.6ns0.6ns", 1, ""},
	{"0.5ns0.5ns", 1, ""},
	{"0.4ns0.5ns", 0, ""},
	{"1.5ns1.5ns", 3, ""},
	{"0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns", 0, ""},
	{"0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns", 1, ""},
	{"0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns", 1, ""},
	{"0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns0.1ns", 2, ""},
	{"0.0000000005s0.5ns", 1, ""},
	{"0.00000000015s0.00000000085s", 1, ""},
	{"0.0000000000000001M0.0000000000000001M0.0000000000000001M", 0, ""}, // 3 × 0.2630016ns
	{"0.0000000000000001M0.0000000000000001M0.0000000000000001M0.0000000000000001M", 1, ""},
	{"0.3333333333333333333ns0.3333333333333333333ns0.3333333333333333333ns", 0, ""},
	{"0.3333333333333333333ns0.3333333333333333333ns0.3333333333333333334ns", 1, ""},
	{"0.3333333333333333333333333333ns0.6666666666666666666666666667ns", 1, ""},
	{"0.6666666666666666666666666667ns0.3333333333333333333333333333ns", 1, ""},
	{"0.25ns0.75ns", 1, ""},
	{"0.1h0.9h", Hour, ""},
	{"0.5y0.5y", Year, ""},
	{"0.9999999999999999999999999999999999999999ns0.0000000000000000000000000000000000000001ns", 1, ""},
	{"0.0000000000000000000000000000000000000001ns0.9999999999999999999999999999999999999999ns", 1, ""},
	{"0.9999999999999999999999999999999999999999ns0.00000000000000000000000000000000000000009ns", 0, ""},
	{"0.999999999999999999999999999999999999999ns0.0000000000000000000000000000000000000001ns0.0000000000000000000000000000000000000009ns", 1, ""},
	{"0.5ns1s0.5ns", Second + 1, ""},
	{"0.50000ns0.5000000000000ns", 1, ""},
	// At the limit a fraction of a nanosecond in any span, anywhere, is past it.
	{"18446744073709551615ns0ns", math.MaxUint64, ""},
	{"18446744073709551615ns0.000ns", math.MaxUint64, ""},
	{"18446744073709551615ns0.5ns", 0, "add up past"},
	{"0.5ns18446744073709551615ns", 0, "add up past"},
	{"18446744073709551615ns0.0000000000000000000000000000001ns", 0, "add up past"},
	{"18446744073709551615.4ns", 0, "add up past"},
	{"18446744073709551614ns0.5ns0.5ns", math.MaxUint64, ""},
	{"0.5ns18446744073709551614ns0.5ns", math.MaxUint64, ""},
	{"0.5ns0.5ns18446744073709551614ns", math.MaxUint64, ""},
	{"18446744073709551614ns0.7ns0.7ns", 0, "add up past"}, // 18446744073709551615.4ns
	{"0.7ns18446744073709551614ns0.7ns", 0, "add up past"},
	{"18446744073709551614ns0.5ns0.6ns", 0, "add up past"},
	{"18446744073709551614ns0.4ns0.6ns", math.MaxUint64, ""},
	{"18446744073709551614ns0.4ns0.6000000000000000000000000001ns", 0, "add up past"},
	{"18446744073.709551615s0.0000000001s", 0, "add up past"},
	{"18446744073.7095516149s0.0000000001s", math.MaxUint64, ""},
	{"0.0000000001s18446744073.7095516149s", math.MaxUint64, ""},
	{"18446744073.7095516149s0.00000000011s", 0, "add up past"},
	{"18446744073.70955161499s0.00000000001s", math.MaxUint64, ""}, // 614.99ns + 0.01ns
	{"18446744073.70955161499s0.000000000011s", 0, "add up past"},  // 614.99ns + 0.011ns
	{"5124095h34m33s709ms551us614.5ns0.5ns", math.MaxUint64, ""},
	{"5124095h34m33s709ms551us614.5ns0.50000000000000000000001ns", 0, "add up past"},
	{"", 0, "empty duration"},
	{"5", 0, "missing unit after '5'"},
	{"1h5", 0, "missing unit after '5'"},
	{"1.5", 0, "missing unit after '1.5'"},
	{"1h0.25", 0, "missing unit after '0.25'"},
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
	for _, tc := range []struct {
		ns   uint64
		want string
	}{
		{0, "0s"},
		{1, "1ns"},
		{999, "999ns"},
		{1000, "1us"},
		{1001, "1.001us"},
		{1500, "1.5us"},
		{999_999, "999.999us"},
		{Millisecond, "1ms"},
		{1500 * Microsecond, "1.5ms"},
		{Second - 1, "999.999999ms"},
		{Second, "1s"},
		{Second + 1, "1.000000001s"},
		{1500 * Millisecond, "1.5s"},
		{Minute, "1m"},
		{Minute + 250*Millisecond, "1m0.25s"},
		{Hour, "1h"},
		{Hour + 30*Minute, "1h30m"},
		{Hour + Second/2, "1h0.5s"},
		{math.MaxUint64, "5124095h34m33.709551615s"},
	} {
		require.Equal(t, tc.want, FormatDuration(tc.ns), "%d ns", tc.ns)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ns := r.Uint64() >> r.UintN(64)
		got, err := ParseDuration(FormatDuration(ns))
		require.NoError(t, err)
		require.Equal(t, ns, got)
	}
}

// refDuration is the math/big reference for text ParseDuration accepts.
func refDuration(t testing.TB, text string) uint64 {
	floor, past, ok := refDurationBig(text)
	require.True(t, ok, "reference rejects %q", text)
	require.False(t, past, "reference overflows for %q", text)
	return floor
}

// refDurationBig sums the spans' exact rational values, unbounded, and
// returns the floor of the sum and whether the sum exceeds MaxDuration; ok
// is false for text that is not a duration.
func refDurationBig(text string) (floor uint64, past, ok bool) {
	if text == "0" {
		return 0, false, true
	}
	total := new(big.Rat)
	rest := text
	if rest == "" {
		return 0, false, false
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
		if i <= 0 {
			return 0, false, false
		}
		num := rest[:i]
		j := strings.IndexFunc(rest[i:], func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
		if j < 0 {
			j = len(rest) - i
		}
		unit, ok := durationUnits[rest[i:i+j]]
		if !ok || strings.Count(num, ".") > 1 || num == "." {
			return 0, false, false
		}
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			return 0, false, false
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(unit)))
		total.Add(total, r)
		rest = rest[i+j:]
	}
	if total.Cmp(new(big.Rat).SetUint64(math.MaxUint64)) > 0 {
		return 0, true, true
	}
	return new(big.Int).Quo(total.Num(), total.Denom()).Uint64(), false, true
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

// TestDurationFractionSumsMatchBig compares sums of many fractional spans,
// whose remainders below a nanosecond add up across whole nanoseconds, with
// the math/big reference, alone and beside a span just under the 64-bit
// limit, in every order.
func TestDurationFractionSumsMatchBig(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	units := []string{"ns", "us", "ms", "s", "h", "M", "y"}
	near := []string{"", "18446744073709551615ns", "18446744073709551614ns", "18446744073709551613ns", "18446744073.7095516ns", "18446744073.709551614s"}
	for range 20000 {
		spans := make([]string, 0, 8)
		for range 1 + r.IntN(7) {
			var b strings.Builder
			if r.IntN(4) == 0 {
				b.WriteString(strconv.Itoa(r.IntN(3)))
			}
			b.WriteByte('.')
			n := 1 + r.IntN(40)
			switch r.IntN(4) {
			case 0: // 0.99…9: one step short of the next whole
				b.WriteString(strings.Repeat("9", n))
			case 1: // 0.00…01: the step
				b.WriteString(strings.Repeat("0", n-1) + "1")
			default:
				for range n {
					b.WriteByte(byte('0' + r.IntN(10)))
				}
			}
			unit := "ns"
			if r.IntN(2) == 0 {
				unit = units[r.IntN(len(units))]
			}
			b.WriteString(unit)
			spans = append(spans, b.String())
		}
		if big := near[r.IntN(len(near))]; big != "" {
			i := r.IntN(len(spans) + 1)
			spans = append(spans[:i], append([]string{big}, spans[i:]...)...)
		}
		checkAgainstBig(t, strings.Join(spans, ""))
	}
}

func checkAgainstBig(t *testing.T, text string) {
	t.Helper()
	got, err := ParseDuration(text)
	want, past, ok := refDurationBig(text)
	if !ok {
		require.Error(t, err, text)
		return
	}
	if past {
		require.ErrorIs(t, err, ErrInvalidDuration, text)
		require.ErrorContains(t, err, "add up past", text)
		return
	}
	require.NoError(t, err, text)
	require.Equal(t, want, got, text)
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
	// Spans are added exactly, however long their fractions: a fraction a
	// step short of a whole nanosecond and the step make one, in either
	// order, and at the limit the step alone is past it.
	for _, n := range []int{1000, 200_000} {
		nines := "0." + strings.Repeat("9", n) + "ns"
		step := "0." + strings.Repeat("0", n-1) + "1ns"
		for _, tc := range []struct {
			text string
			want uint64
		}{
			{nines, 0},
			{nines + step, 1},
			{step + nines, 1},
			{nines + step + step, 1},
			{"18446744073709551614ns" + nines + step, math.MaxUint64},
			{step + "18446744073709551614ns" + nines, math.MaxUint64},
		} {
			got, err := ParseDuration(tc.text)
			require.NoError(t, err, "%d digits", n)
			require.Equal(t, tc.want, got, "%d digits", n)
		}
		for _, text := range []string{"18446744073709551615ns" + step, step + "18446744073709551615ns", "18446744073709551614ns" + nines + step + step} {
			_, err := ParseDuration(text)
			require.ErrorIs(t, err, ErrInvalidDuration, "%d digits", n)
			require.ErrorContains(t, err, "add up past", "%d digits", n)
		}
	}
	for _, text := range []string{
		"0." + strings.Repeat("73", 30) + "y0." + strings.Repeat("8", 2_000) + "M0." + strings.Repeat("37", 1_000) + "s",
		"1." + strings.Repeat("4", 3_000) + "ns2." + strings.Repeat("6", 2_999) + "7ns",
	} {
		checkAgainstBig(t, text)
	}

	long := "1." + strings.Repeat("123456789", 20_000) + "y"
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := ParseDuration(long); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	// Several fractional spans of a few dozen digits do not allocate
	// either, and longer ones allocate once, not per digit or per span.
	short := strings.Repeat("0."+strings.Repeat("7", 64)+"ns", 50)
	allocs = testing.AllocsPerRun(3, func() {
		if _, err := ParseDuration(short); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
	many := strings.Repeat("0."+strings.Repeat("123456789", 1_000)+"us", 50)
	allocs = testing.AllocsPerRun(3, func() {
		if _, err := ParseDuration(many); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, 1.0, allocs)
}

func BenchmarkParseDuration(b *testing.B) {
	for _, text := range []string{
		"250ms",
		"1h30m",
		"1.5s",
		"5124095h34m33s709ms551us615ns",
		"0.6ns0.6ns0.25s0.333333333333h",
		"1." + strings.Repeat("123456789", 1000) + "y",
		"0." + strings.Repeat("9", 4000) + "y0." + strings.Repeat("3", 4000) + "M",
	} {
		name := text
		if len(name) > 32 {
			name = name[:32] + "…"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseDuration(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
