package pyext

// pointers.go: *T of a value type T (a number, bool, string, complex,
// time.Time, time.Duration, Path) as PyO3's Option<T>: a parameter takes
// None as nil, a nil result is None. A *T of a Go class stays the class's
// object (nil refused), and *big.Int is an int.

// #include "ext.h"
import "C"

import (
	"fmt"
	"reflect"
)

// optionalKinds is the kinds of T whose *T takes None.
var optionalKinds = map[byte]bool{
	C.GDL_V_FLOAT: true, C.GDL_V_INT: true, C.GDL_V_UINT: true, C.GDL_V_BOOL: true, C.GDL_V_STR: true,
	C.GDL_V_COMPLEX: true, C.GDL_V_TIME: true, C.GDL_V_DURATION: true, C.GDL_V_PATH: true,
}

// isOptional says whether t is a *T that Python sees as T or None.
func isOptional(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() == reflect.Pointer || t == bigIntType || t == borrowType || t == sourceType || classFor(t) != nil {
		return false
	}
	kind, _, err := paramFor(t.Elem())
	return err == nil && optionalKinds[kind]
}

// optionalParam converts an argument to *T: nil for None (C's none), else a
// new T converted as a T parameter is.
func optionalParam(t reflect.Type) (byte, param, error) {
	kind, p, err := paramFor(t.Elem())
	if err != nil {
		return 0, nil, err
	}
	return kind, func(v *C.gdl_value, name string, i int) (reflect.Value, error) {
		if v.none != 0 {
			return reflect.Zero(t), nil
		}
		x, err := p(v, name, i)
		if err != nil {
			return reflect.Zero(t), err
		}
		ptr := reflect.New(t.Elem())
		ptr.Elem().Set(x)
		return ptr, nil
	}, nil
}

// optionalResult converts a *T result: None for nil, else *T as a T result.
func optionalResult(t reflect.Type) (result, error) {
	r, err := resultFor(t.Elem())
	if err != nil {
		return result{}, fmt.Errorf("%v: %w", t, err)
	}
	return result{r.kind, func(rv reflect.Value, v *C.gdl_value, in []span) error {
		if rv.IsNil() {
			v.none, v.s, v.p = 1, nil, nil
			return nil
		}
		return r.put(rv.Elem(), v, in)
	}}, nil
}
