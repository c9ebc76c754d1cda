package producer

import (
	"math"

	"github.com/godlpack/godlpack"
)

// minifloat describes an 8-bit float format for Full and Arange. The rules
// follow ml_dtypes (what JAX and PyTorch use): round to nearest even; IEEE-like
// formats overflow to infinity, "fn" ones (no infinity) to NaN, "fnuz" ones
// (no infinity, no negative zero, NaN is 0x80) to that NaN.
type minifloat struct {
	ebits, mbits uint
	bias         int
	flavor       int
}

const (
	ieee = iota // infinities and NaNs at the top exponent
	fn          // no infinities; NaN is all ones
	fnuz        // no infinities, no -0; NaN is 0x80
)

var minifloats = map[uint8]minifloat{
	godlpack.CodeFloat8E3M4:        {3, 4, 3, ieee},
	godlpack.CodeFloat8E4M3:        {4, 3, 7, ieee},
	godlpack.CodeFloat8E5M2:        {5, 2, 15, ieee},
	godlpack.CodeFloat8E4M3FN:      {4, 3, 7, fn},
	godlpack.CodeFloat8E4M3FNUZ:    {4, 3, 8, fnuz},
	godlpack.CodeFloat8E5M2FNUZ:    {5, 2, 16, fnuz},
	godlpack.CodeFloat8E4M3B11FNUZ: {4, 3, 11, fnuz},
}

// encode rounds x to the format's 8-bit code.
func (f minifloat) encode(x float64) uint8 {
	width := f.ebits + f.mbits
	signBit := uint8(0)
	if math.Signbit(x) {
		signBit = 1 << width
	}
	mantOnes := uint32(1)<<f.mbits - 1
	nan := map[int]uint8{ieee: uint8(((1<<f.ebits-1)<<f.mbits | 1<<(f.mbits-1))), fn: 0x7f, fnuz: 0x80}[f.flavor]
	var maxCode uint32
	switch f.flavor {
	case ieee:
		maxCode = (1<<f.ebits-2)<<f.mbits | mantOnes
	case fn:
		maxCode = 1<<width - 2
	case fnuz:
		maxCode = 1<<width - 1
	}
	overflow := func() uint8 {
		switch f.flavor {
		case ieee:
			return signBit | uint8((1<<f.ebits-1)<<f.mbits)
		case fn:
			return signBit | nan
		}
		return nan
	}
	switch {
	case math.IsNaN(x): // the NaN keeps its sign where the format has one
		if f.flavor == fnuz {
			return nan
		}
		return signBit | nan
	case math.IsInf(x, 0):
		return overflow()
	case x == 0:
		if f.flavor == fnuz {
			return 0
		}
		return signBit
	}
	a := math.Abs(x)
	emin := 1 - f.bias // exponent of the smallest normal
	frac, exp := math.Frexp(a)
	e := exp - 1 // a = (2*frac) * 2^e, 1 <= 2*frac < 2
	var code uint32
	if e < emin {
		q := math.RoundToEven(math.Ldexp(a, -(emin - int(f.mbits))))
		code = uint32(q) // subnormal; 2^mbits here is the smallest normal, by construction
	} else {
		q := math.RoundToEven(math.Ldexp(2*frac, int(f.mbits))) // in [2^mbits, 2^(mbits+1)]
		code = uint32(e+f.bias)<<f.mbits + uint32(q) - 1<<f.mbits
	}
	if code > maxCode {
		return overflow()
	}
	if code == 0 && f.flavor == fnuz {
		return 0
	}
	return signBit | uint8(code)
}

// encodeE8M0 rounds x to float8_e8m0fnu: an unsigned power of two 2^(code-127)
// with 0xff as NaN (no zero, no sign).
func encodeE8M0(x float64) uint8 {
	if math.IsNaN(x) || x <= 0 || math.IsInf(x, 0) {
		return 0xff
	}
	frac, exp := math.Frexp(x)
	e := exp - 1
	if 2*frac >= 1.5 { // nearest power of two; 1.5 rounds up, as ml_dtypes does
		e++
	}
	switch {
	case e < -127:
		return 0
	case e > 127:
		return 0xff // rounds past 2^127: NaN, the format's only overflow
	}
	return uint8(e + 127)
}

// decode is the value of the format's 8-bit code c.
func (f minifloat) decode(c uint8) float64 {
	width := f.ebits + f.mbits
	switch {
	case f.flavor == fnuz && c == 0x80, f.flavor == fn && c&0x7f == 0x7f:
		return math.NaN()
	}
	sign := 1.0
	if c>>width&1 == 1 {
		sign = -1
	}
	e, m := int(c>>f.mbits)&(1<<f.ebits-1), float64(int(c)&(1<<f.mbits-1))
	if f.flavor == ieee && e == 1<<f.ebits-1 {
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	if e == 0 {
		return sign * math.Ldexp(m, 1-f.bias-int(f.mbits))
	}
	return sign * math.Ldexp(m+float64(int(1)<<f.mbits), e-f.bias-int(f.mbits))
}
