package pyext

// results.go: a Go result type's conversion to C's value of a Python object:
// scalars, []byte as bytes, and other slices exported as Tensors that alias
// no argument.

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

func resultFor(t reflect.Type) (result, error) {
	if isAnyResult(t) { // any, []any, map[string]any, map[any]any (anyconv.go)
		return anyResult(), nil
	}
	if r, ok, err := valueResult(t); ok { // complex, *big.Int, time, Path, ByteArray, *T (values.go)
		return r, err
	}
	if r, ok, err := seqResult(t); ok { // seqresult.go
		return r, err
	}
	if at := arrayTypeOf(t); at != nil { // arraytype.go
		return result{C.GDL_V_ARRAY, func(rv reflect.Value, v *C.gdl_value, in []span) error {
			var x any
			if rv.IsValid() { // a nil interface, through the typed wrappers, is not
				x = rv.Interface()
			}
			return at.put(x, v, in)
		}}, nil
	}
	if r, ok := containerResult(t); ok { // []string, map[string]T, []*T of a class (containers.go)
		return r, nil
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return result{C.GDL_V_FLOAT, func(rv reflect.Value, v *C.gdl_value, _ []span) error { v.f = C.double(rv.Float()); return nil }}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return result{C.GDL_V_INT, func(rv reflect.Value, v *C.gdl_value, _ []span) error { v.i = C.int64_t(rv.Int()); return nil }}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return result{C.GDL_V_UINT, func(rv reflect.Value, v *C.gdl_value, _ []span) error { v.i = C.int64_t(rv.Uint()); return nil }}, nil
	case reflect.Bool:
		return result{C.GDL_V_BOOL, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
			v.i = 0 // C's out values are not cleared
			if rv.Bool() {
				v.i = 1
			}
			return nil
		}}, nil
	case reflect.String:
		return result{C.GDL_V_STR, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
			s := rv.String()
			v.s, v.n = C.CString(s), C.int64_t(len(s))
			return nil
		}}, nil
	case reflect.Slice:
		if isBytes(t) { // Python bytes (bytesresult.go); a Tensor is a godlpack.Tensor or producer result
			return bytesResult(), nil
		}
		dt, ok := godlpack.DTypeOfKind(t.Elem().Kind())
		if !ok {
			return result{}, fmt.Errorf("unsupported slice type %v", t)
		}
		return result{C.GDL_V_ARRAY, func(rv reflect.Value, v *C.gdl_value, in []span) error {
			src, err := sliceSource(rv, dt, in)
			if err != nil {
				return err
			}
			return exportSource(src, v)
		}}, nil
	}
	if t == sourceType {
		return result{C.GDL_V_ARRAY, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
			src := rv.Interface().(*producer.Source)
			if src == nil {
				return &ValueError{"a nil *producer.Source was returned"}
			}
			return exportSource(src, v)
		}}, nil
	}
	if classFor(t) != nil {
		return objResult(t), nil
	}
	return result{}, fmt.Errorf("unsupported result type %v%s", t, adapterHint(t))
}

// sliceSource exports a returned slice zero-copy, pinned until Python
// releases it: the function must not use the slice any more.
func sliceSource(rv reflect.Value, dt godlpack.DType, in []span) (*producer.Source, error) {
	n := int64(rv.Len())
	keep := rv.Interface()
	var data unsafe.Pointer
	if n > 0 {
		data = rv.Index(0).Addr().UnsafePointer()
		for _, s := range in {
			if a := uintptr(data); a >= s.lo && a < s.hi {
				return nil, &ValueError{"a returned slice aliases an argument's memory, which is released when the call returns: return a new slice (e.g. slices.Clone)"}
			}
		}
	}
	return producer.FromPointer(data, keep, dt, []int64{n})
}

func exportSource(src *producer.Source, v *C.gdl_value) error {
	defer src.Close()
	m, err := src.ExportVersioned(0)
	if err != nil {
		return err
	}
	v.p = unsafe.Pointer(m)
	return nil
}
