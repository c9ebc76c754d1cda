package pyext

// values.go: the Go types with Python values of their own beyond scalars,
// strings, arrays and containers (ext_conv.c converts them): which kind each
// is, for params.go, results.go and stub_types.go. docs/extensions.md's
// "Python values" table lists them beside PyO3's.

// #include "ext.h"
import "C"

import (
	"math"
	"math/big"
	"reflect"
	"time"
)

var (
	bigIntType    = reflect.TypeFor[*big.Int]()
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	pathType      = reflect.TypeFor[Path]()
	byteArrayType = reflect.TypeFor[ByteArray]()
)

// valueParam is the kind and converter of a parameter of one of these
// types; ok false for any other type.
func valueParam(t reflect.Type) (kind byte, p param, ok bool, err error) {
	switch {
	case t == bigIntType:
		return C.GDL_V_BIGINT, bigIntParam, true, nil
	case t == timeType:
		return C.GDL_V_TIME, timeParam, true, nil
	case t == durationType:
		return C.GDL_V_DURATION, durationParam, true, nil
	case t == pathType:
		return C.GDL_V_PATH, pathParam, true, nil
	case t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128:
		return C.GDL_V_COMPLEX, complexParam(t), true, nil
	case isOptional(t):
		kind, p, err := optionalParam(t) // pointers.go
		return kind, p, true, err
	}
	return 0, nil, false, nil
}

// valueResult is the converter of a result of one of these types.
func valueResult(t reflect.Type) (result, bool, error) {
	switch {
	case t == bigIntType:
		return result{C.GDL_V_BIGINT, putBigInt}, true, nil
	case t == timeType:
		return result{C.GDL_V_TIME, putTime}, true, nil
	case t == durationType:
		return result{C.GDL_V_DURATION, putDuration}, true, nil
	case t == pathType:
		return result{C.GDL_V_PATH, putPath}, true, nil
	case t == byteArrayType:
		return byteArrayResult(), true, nil // bytesresult.go
	case t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128:
		return result{C.GDL_V_COMPLEX, putComplex}, true, nil
	case isOptional(t):
		r, err := optionalResult(t) // pointers.go
		return r, true, err
	}
	return result{}, false, nil
}

// valueElem is what C checks an argument of these types against: a
// complex64's range; a *T's T, and that it takes None.
func valueElem(t reflect.Type) (C.gdl_elem, bool) {
	switch {
	case t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128:
		return C.gdl_elem{code: C.uint8_t(5 /* kDLComplex */), bits: C.uint8_t(t.Bits())}, true
	case t == bigIntType, t == timeType, t == durationType, t == pathType:
		return C.gdl_elem{}, true
	case isOptional(t):
		e := elemOf(t.Elem())
		e.opt = 1
		return e, true
	}
	return C.gdl_elem{}, false
}

// valueStub is a stub's annotation for these types; the module's stub
// imports datetime and os (stubImports) for them.
func valueStub(t reflect.Type, param bool) (string, bool) {
	switch {
	case t == bigIntType:
		return "int", true
	case t == timeType:
		return "datetime.datetime", true
	case t == durationType:
		return "datetime.timedelta", true
	case t == pathType && param:
		return "str | bytes | os.PathLike[str] | os.PathLike[bytes]", true
	case t == pathType:
		return "str", true
	case t == byteArrayType && !param:
		return "bytearray", true
	case t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128:
		return "complex", true
	case isOptional(t):
		return StubType(t.Elem(), param) + " | None", true
	}
	return "", false
}

// stubImports is the modules the stub of m imports for these types'
// annotations ("import datetime\nimport os\n", or less).
func (m *Module) stubImports() string {
	var dt, os bool
	visit := func(t reflect.Type) {
		for t.Kind() == reflect.Pointer && isOptional(t) {
			t = t.Elem()
		}
		dt = dt || t == timeType || t == durationType
		os = os || t == pathType
	}
	for _, f := range m.allFuncs() {
		for i := 0; i < f.typ.NumIn(); i++ {
			visit(f.typ.In(i))
		}
		for i := 0; i < f.typ.NumOut(); i++ {
			visit(f.typ.Out(i))
		}
	}
	s := ""
	if dt {
		s += "import datetime\n"
	}
	if os {
		s += "import os\n"
	}
	return s
}

// valueArg converts an argument of complex128, complex64, time.Duration or
// time.Time (A, which the typed wrappers checked) as params.go does, with
// no reflect.Value.
func valueArg[A any](v *C.gdl_value) A {
	var z A
	switch any(z).(type) {
	case complex128:
		return as[A](complex(float64(v.f), math.Float64frombits(uint64(v.i))))
	case complex64:
		return as[A](complex64(complex(float64(v.f), math.Float64frombits(uint64(v.i)))))
	case time.Duration:
		return as[A](time.Duration(v.i))
	}
	return as[A](timeOf(v))
}

// putValue is valueArg's inverse, for results.
func putValue[R any](x R, v *C.gdl_value) error {
	switch x := any(x).(type) {
	case complex128:
		v.f, v.i = C.double(real(x)), C.int64_t(math.Float64bits(imag(x)))
	case complex64:
		v.f, v.i = C.double(real(x)), C.int64_t(math.Float64bits(float64(imag(x))))
	case time.Duration:
		v.i = C.int64_t(x)
	case time.Time:
		return putTimeOf(x, v)
	}
	return nil
}
