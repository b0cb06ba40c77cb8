package clock

import (
	"math"
	"math/bits"
	"strconv"
)

// rateParts is an exact decomposition of a positive finite float64 rate as
// mant × 2^exp with mant odd, so mant < 2^53 and -1074 ≤ exp ≤ 971.
type rateParts struct {
	mant uint64
	exp  int
}

// decompose splits rate into its exact integer parts. It reports false for
// zero, negative, NaN and infinite rates.
func decompose(rate float64) (rateParts, bool) {
	b := math.Float64bits(rate)
	if b>>63 != 0 {
		return rateParts{}, false
	}
	e := int(b>>52) & 0x7ff
	f := b & (1<<52 - 1)
	var p rateParts
	switch {
	case e == 0x7ff:
		return rateParts{}, false
	case e == 0:
		if f == 0 {
			return rateParts{}, false
		}
		p = rateParts{mant: f, exp: -1074}
	default:
		p = rateParts{mant: f | 1<<52, exp: e - 1075}
	}
	tz := bits.TrailingZeros64(p.mant)
	p.mant >>= uint(tz)
	p.exp += tz
	return p, true
}

// mulFloor returns floor(x × mant × 2^exp) and reports false when it does
// not fit in 64 bits.
func (p rateParts) mulFloor(x uint64) (uint64, bool) {
	hi, lo := bits.Mul64(x, p.mant)
	if p.exp >= 0 {
		if hi == 0 && lo == 0 {
			return 0, true
		}
		if hi != 0 || bits.Len64(lo)+p.exp > 64 {
			return 0, false
		}
		return lo << uint(p.exp), true
	}
	k := uint(-p.exp)
	switch {
	case k >= 128:
		return 0, true
	case k >= 64:
		return hi >> (k - 64), true
	default:
		if hi>>k != 0 {
			return 0, false
		}
		return lo>>k | hi<<(64-k), true
	}
}

// divCeil returns ceil(d / (mant × 2^exp)) and reports false when it does not
// fit in 64 bits.
func (p rateParts) divCeil(d uint64) (uint64, bool) {
	if d == 0 {
		return 0, true
	}
	if p.exp >= 0 {
		if bits.Len64(p.mant)+p.exp > 64 {
			// The divisor is at least 2^64 > d, so the quotient is in (0, 1).
			return 1, true
		}
		den := p.mant << uint(p.exp)
		q, r := d/den, d%den
		if r != 0 {
			q++ // q < d when den ≥ 2, and r == 0 when den == 1.
		}
		return q, true
	}
	k := -p.exp
	if bits.Len64(d)+k > 128 {
		// The quotient is at least 2^(len(d)-1+k-53) ≥ 2^75.
		return 0, false
	}
	var hi, lo uint64
	if k >= 64 {
		hi, lo = d<<uint(k-64), 0
	} else {
		hi, lo = d>>uint(64-k), d<<uint(k)
	}
	if hi >= p.mant {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, p.mant)
	if r != 0 {
		if q == math.MaxUint64 {
			return 0, false
		}
		q++
	}
	return q, true
}

func formatRate(rate float64) string {
	return strconv.FormatFloat(rate, 'g', -1, 64)
}

// addOffset returns base + off when it fits in int64.
func addOffset(base int64, off uint64) (int64, bool) {
	// The room above base is MaxInt64 - base, which is in [0, 2^64-1] and is
	// therefore exact in modular uint64 arithmetic.
	room := uint64(math.MaxInt64) - uint64(base)
	if off > room {
		return 0, false
	}
	return int64(uint64(base) + off), true
}
