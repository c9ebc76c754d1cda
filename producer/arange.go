package producer

import (
	"errors"
	"math"
	"math/big"

	"github.com/godlpack/godlpack"
)

// Arange is the 1-d tensor start, start+step, ... below stop (above, for a
// negative step), with NumPy's values: the length is ceil((stop-start)/step),
// the first two elements are start and start+step converted to dt, and
// element i is first + i*(second-first), computed in dt's integer type, in
// float32 for floats narrower than 64 bits (NumPy's and ml_dtypes' fill) and
// in float64 otherwise (float8_e8m0fnu too: powers of two have no useful
// steps, and its zero is NaN). An integer dtype takes the float values truncated
// toward zero; an element it cannot hold is ErrOutOfRange (NumPy raises for
// the first two and wraps the rest: godlpack refuses them all alike).
func Arange(dt godlpack.DType, start, stop, step float64) (*Source, error) {
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) || math.IsNaN(start) || math.IsNaN(stop) ||
		math.IsInf(start, 0) {
		return nil, errors.New("producer: arange needs a finite non-zero step and finite bounds")
	}
	count := math.Ceil((stop - start) / step)
	if count < 0 || math.IsNaN(count) {
		count = 0
	}
	if count > math.MaxInt64/16 {
		return nil, godlpack.Invalid(godlpack.ErrOverflow, "arange of %g elements", count)
	}
	n := int64(count)
	if dt.Code == godlpack.CodeInt || dt.Code == godlpack.CodeUInt {
		return arangeInts(dt, n, start, start+step)
	}
	value, err := arangeFloats(dt, start, start+step)
	if err != nil {
		return nil, err
	}
	s, err := Empty(dt, n)
	if err != nil {
		return nil, err
	}
	if err := fillWith(s.t.Data, dt, n, func(i int64) complex128 { return complex(value(i), 0) }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// arangeFloats is element i of a float arange whose first two elements are
// first and second before rounding to dt.
func arangeFloats(dt godlpack.DType, first, second float64) (func(int64) float64, error) {
	if dt == godlpack.Float64 || dt == godlpack.Complex128 || dt == godlpack.Bool || dt.Code == godlpack.CodeFloat8E8M0FNU {
		delta := second - first
		return func(i int64) float64 {
			switch i {
			case 0:
				return first
			case 1:
				return second
			}
			// The conversion rounds the product: Go may otherwise fuse the
			// multiply and add (it does on arm64), which NumPy's values are not.
			return first + float64(float64(i)*delta)
		}, nil
	}
	stored, err := roundTo(dt)
	if err != nil {
		return nil, err
	}
	s0, s1 := float32(stored(first)), float32(stored(second))
	delta := s1 - s0
	return func(i int64) float64 {
		switch i {
		case 0:
			return float64(s0)
		case 1:
			return float64(s1)
		}
		return float64(s0 + float32(float32(i)*delta)) // rounded product, as above
	}, nil
}

// roundTo is the value a float64 becomes when stored as dt (a float type
// narrower than 64 bits), as a float64.
func roundTo(dt godlpack.DType) (func(float64) float64, error) {
	switch dt {
	case godlpack.Float32, godlpack.Complex64:
		return func(x float64) float64 { return float64(float32(x)) }, nil
	case godlpack.Float16:
		return func(x float64) float64 { return float16Value(Float16Bits(x)) }, nil
	case godlpack.Bfloat16:
		return func(x float64) float64 { return float64(math.Float32frombits(uint32(Bfloat16Bits(x)) << 16)) }, nil
	}
	if f, ok := minifloats[dt.Code]; ok && dt.Bits == 8 && dt.Lanes == 1 {
		return func(x float64) float64 { return f.decode(f.encode(x)) }, nil
	}
	return nil, godlpack.Invalid(godlpack.ErrDType, "cannot write values of dtype %v (packed sub-byte types: "+
		"use Empty or Zeros)", dt)
}

// float16Value is the value of IEEE 754 binary16 bits.
func float16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(m, -24)
	}
	return sign * math.Ldexp(1024+m, e-25)
}

// arangeInts fills n elements first' + i*(second'-first'), where first' and
// second' are first and second truncated toward zero; every element must
// fit dt. The arithmetic wraps in uint64, which is exact for elements that
// fit.
func arangeInts(dt godlpack.DType, n int64, first, second float64) (*Source, error) {
	v0, ok0 := truncInt(dt, first)
	v1, ok1 := truncInt(dt, second)
	if n > 0 && !ok0 || n > 1 && !ok1 {
		bad := first
		if ok0 {
			bad = second
		}
		return nil, godlpack.Invalid(ErrOutOfRange, "arange element %g does not fit %v", bad, dt)
	}
	if n > 1 { // the last element, exactly: first' + (n-1)*(second'-first')
		delta := new(big.Int).Sub(bigOf(second), bigOf(first))
		last := new(big.Int).Add(bigOf(first), delta.Mul(delta, big.NewInt(n-1)))
		if lo, hi := intBounds(dt); last.Cmp(lo) < 0 || last.Cmp(hi) > 0 {
			return nil, godlpack.Invalid(ErrOutOfRange, "arange element %v does not fit %v", last, dt)
		}
	}
	s, err := Empty(dt, n)
	if err != nil {
		return nil, err
	}
	d := v1 - v0
	if err := fillInts(s.t.Data, dt, n, func(i int64) int64 { return int64(v0 + uint64(i)*d) }); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// truncInt is f truncated toward zero as the bits of an element of the
// integer dtype dt, and whether dt holds it.
func truncInt(dt godlpack.DType, f float64) (uint64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	t := math.Trunc(f)
	if dt.Code == godlpack.CodeUInt {
		return uint64(t), t >= 0 && t < math.Ldexp(1, int(dt.Bits))
	}
	lim := math.Ldexp(1, int(dt.Bits)-1)
	return uint64(int64(t)), t >= -lim && t < lim
}

// bigOf is f truncated toward zero, exactly (f is finite).
func bigOf(f float64) *big.Int {
	i, _ := big.NewFloat(math.Trunc(f)).Int(nil)
	return i
}

// intBounds is the smallest and largest value of an integer dtype.
func intBounds(dt godlpack.DType) (*big.Int, *big.Int) {
	one := big.NewInt(1)
	if dt.Code == godlpack.CodeUInt {
		return big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(one, uint(dt.Bits)), one)
	}
	hi := new(big.Int).Lsh(one, uint(dt.Bits)-1)
	return new(big.Int).Neg(hi), hi.Sub(hi, one)
}
