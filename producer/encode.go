package producer

import (
	"encoding/binary"
	"math"

	"github.com/godlpack/godlpack"
)

// Encoder returns a function writing a value as one element of dt
// (little-endian, as every platform we build for). Integer conversions
// truncate toward zero and wrap like a C cast of the integer value.
func Encoder(dt godlpack.DType) (func(dst []byte, v complex128), error) {
	le := binary.LittleEndian
	switch dt {
	case godlpack.Bool:
		return func(d []byte, v complex128) { d[0] = b2u(v != 0) }, nil
	case godlpack.Int8, godlpack.Uint8:
		return func(d []byte, v complex128) { d[0] = byte(toInt(real(v))) }, nil
	case godlpack.Int16, godlpack.Uint16:
		return func(d []byte, v complex128) { le.PutUint16(d, uint16(toInt(real(v)))) }, nil
	case godlpack.Int32, godlpack.Uint32:
		return func(d []byte, v complex128) { le.PutUint32(d, uint32(toInt(real(v)))) }, nil
	case godlpack.Int64, godlpack.Uint64:
		return func(d []byte, v complex128) { le.PutUint64(d, uint64(toInt(real(v)))) }, nil
	case godlpack.Float16:
		return func(d []byte, v complex128) { le.PutUint16(d, Float16Bits(real(v))) }, nil
	case godlpack.Bfloat16:
		return func(d []byte, v complex128) { le.PutUint16(d, Bfloat16Bits(real(v))) }, nil
	case godlpack.Float32:
		return func(d []byte, v complex128) { le.PutUint32(d, math.Float32bits(float32(real(v)))) }, nil
	case godlpack.Float64:
		return func(d []byte, v complex128) { le.PutUint64(d, math.Float64bits(real(v))) }, nil
	case godlpack.Complex64:
		return func(d []byte, v complex128) {
			le.PutUint32(d, math.Float32bits(float32(real(v))))
			le.PutUint32(d[4:], math.Float32bits(float32(imag(v))))
		}, nil
	case godlpack.Complex128:
		return func(d []byte, v complex128) {
			le.PutUint64(d, math.Float64bits(real(v)))
			le.PutUint64(d[8:], math.Float64bits(imag(v)))
		}, nil
	}
	if f, ok := minifloats[dt.Code]; ok && dt.Bits == 8 && dt.Lanes == 1 {
		return func(d []byte, v complex128) { d[0] = f.encode(real(v)) }, nil
	}
	if dt.Code == godlpack.CodeFloat8E8M0FNU && dt.Bits == 8 && dt.Lanes == 1 {
		return func(d []byte, v complex128) { d[0] = encodeE8M0(real(v)) }, nil
	}
	return nil, godlpack.Invalid(godlpack.ErrDType, "cannot write values of dtype %v (packed sub-byte types: "+
		"use Empty or Zeros)", dt)
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// toInt converts like NumPy's float→int cast for in-range values: truncation.
// Values beyond int64 saturate so the result is deterministic.
func toInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		if f < math.MaxUint64 {
			return int64(uint64(f))
		}
		return -1
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// float32BitsRoundToOdd narrows f to float32 rounding toward zero and setting
// the lowest mantissa bit when the result is inexact ("round to odd"). A second
// nearest-even rounding to a format at least two bits narrower then gives the
// same result as rounding f directly; plain float32(f) would round twice.
func float32BitsRoundToOdd(f float64) uint32 {
	r := float32(f)
	b := math.Float32bits(r)
	if math.IsNaN(f) || float64(r) == f {
		return b
	}
	if math.Abs(float64(r)) > math.Abs(f) {
		b-- // step back toward zero (magnitudes order like their bits)
	}
	return b | 1
}

// Float16Bits rounds f to IEEE 754 binary16, nearest-even.
func Float16Bits(f float64) uint16 {
	b := float32BitsRoundToOdd(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127+15 >= 0x1f: // overflow
		return sign | 0x7c00
	case exp-127+15 <= 0: // subnormal or zero in half
		shift := uint32(14 - (exp - 127 + 15))
		if shift > 24 {
			return sign
		}
		m := man | 0x800000
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rem := m & ((1 << shift) - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	e := uint32(exp - 127 + 15)
	r := (e << 10) | (man >> 13)
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, which is the right result
	}
	return sign | uint16(r)
}

// Bfloat16Bits rounds f to bfloat16 (the top half of a float32), nearest-even.
func Bfloat16Bits(f float64) uint16 {
	b := float32BitsRoundToOdd(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}
