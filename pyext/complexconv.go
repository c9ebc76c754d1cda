package pyext

// complexconv.go: complex64 and complex128 as Python complex. C passes the
// real part in f and the imaginary part's bits in i (ext_conv.c); a
// complex64 argument is rounded to float32 parts, and refused
// (OverflowError) when a finite part is beyond float32's range.

// #include "ext.h"
import "C"

import (
	"math"
	"reflect"
)

func complexParam(t reflect.Type) param {
	return func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		return reflect.ValueOf(complex(float64(v.f), math.Float64frombits(uint64(v.i)))).Convert(t), nil
	}
}

func putComplex(rv reflect.Value, v *C.gdl_value, _ []span) error {
	c := rv.Complex()
	v.f, v.i = C.double(real(c)), C.int64_t(math.Float64bits(imag(c)))
	return nil
}
