package pyext

// params.go: a Go parameter type's conversion from C's value of a Python argument:
// scalars, typed slices (zero-copy views), Tensors and the memory they alias.

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
	"github.com/godlpack/godlpack/consumer"
)

func paramFor(t reflect.Type) (byte, param, error) {
	if isAnyParam(t) { // any, []any, map[string]any: a Python value tree (anyconv.go)
		return C.GDL_V_ANY, anyParam(t), nil
	}
	if kind, p, ok, err := valueParam(t); ok { // complex, *big.Int, time, Path, *T (values.go)
		return kind, p, err
	}
	if at := arrayTypeOf(t); at != nil { // arraytype.go
		return C.GDL_V_ARRAY, func(v *C.gdl_value, name string, i int) (reflect.Value, error) {
			x, err := at.param(v, name, i)
			rv := reflect.New(t).Elem() // t may be an interface type
			if x != nil {
				rv.Set(reflect.ValueOf(x))
			}
			return rv, err
		}, nil
	}
	if kind, p, ok := containerParam(t); ok { // []string, map[string]T (containers.go)
		return kind, p, nil
	}
	if t.Kind() == reflect.Func { // a Python callable (callback.go)
		p, err := callableParam(t)
		return C.GDL_V_CALLABLE, p, err
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return C.GDL_V_FLOAT, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
			return reflect.ValueOf(float64(v.f)).Convert(t), nil
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return C.GDL_V_INT, func(v *C.gdl_value, name string, i int) (reflect.Value, error) {
			rv := reflect.New(t).Elem()
			if rv.OverflowInt(int64(v.i)) {
				return rv, &overflowError{fmt.Sprintf("%s() argument %d: %d out of range for %v", name, i+1, v.i, t)}
			}
			rv.SetInt(int64(v.i))
			return rv, nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return C.GDL_V_UINT, func(v *C.gdl_value, name string, i int) (reflect.Value, error) {
			rv := reflect.New(t).Elem()
			if rv.OverflowUint(uint64(v.i)) {
				return rv, &overflowError{fmt.Sprintf("%s() argument %d: %d out of range for %v", name, i+1, uint64(v.i), t)}
			}
			rv.SetUint(uint64(v.i))
			return rv, nil
		}, nil
	case reflect.Bool:
		return C.GDL_V_BOOL, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
			return reflect.ValueOf(v.i != 0).Convert(t), nil
		}, nil
	case reflect.String:
		return C.GDL_V_STR, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
			return reflect.ValueOf(C.GoStringN(v.s, C.int(v.n))).Convert(t), nil
		}, nil
	case reflect.Slice:
		p, ok := sliceParam(t)
		if !ok {
			return 0, nil, fmt.Errorf("unsupported slice type %v", t)
		}
		return C.GDL_V_ARRAY, p, nil
	}
	if p, ok := ndParam(t); ok { // ndarray.go
		return C.GDL_V_ARRAY, p, nil
	}
	if t == tensorType {
		return C.GDL_V_ARRAY, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
			return reflect.ValueOf(tensorArg(v)), nil
		}, nil
	}
	if t == borrowType {
		return C.GDL_V_ARRAY, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
			ct, err := borrowArg(v)
			return reflect.ValueOf(ct), err
		}, nil
	}
	if classFor(t) != nil {
		return C.GDL_V_OBJ, objParam, nil
	}
	return 0, nil, fmt.Errorf("unsupported parameter type %v%s", t, adapterHint(t))
}

type overflowError struct{ msg string }

func (e *overflowError) Error() string { return e.msg }

// sliceParam converts array arguments to the slice type t.
func sliceParam(t reflect.Type) (param, bool) {
	switch t.Elem().Kind() {
	case reflect.Bool:
		return typedSlice[bool](t), true
	case reflect.Int8:
		return typedSlice[int8](t), true
	case reflect.Int16:
		return typedSlice[int16](t), true
	case reflect.Int32:
		return typedSlice[int32](t), true
	case reflect.Int64:
		return typedSlice[int64](t), true
	case reflect.Uint8:
		return typedSlice[uint8](t), true
	case reflect.Uint16:
		return typedSlice[uint16](t), true
	case reflect.Uint32:
		return typedSlice[uint32](t), true
	case reflect.Uint64:
		return typedSlice[uint64](t), true
	case reflect.Float32:
		return typedSlice[float32](t), true
	case reflect.Float64:
		return typedSlice[float64](t), true
	case reflect.Complex64:
		return typedSlice[complex64](t), true
	case reflect.Complex128:
		return typedSlice[complex128](t), true
	}
	return nil, false
}

// elemOf is what C checks an argument against for a parameter of type t: a
// typed slice's element dtype, a numeric scalar's Go type (for its range
// check), zero for anything else.
func elemOf(t reflect.Type) C.gdl_elem {
	if isAnyParam(t) { // anyconv.go
		return anyElem(t)
	}
	if e, ok := valueElem(t); ok { // values.go
		return e
	}
	if at := arrayTypeOf(t); at != nil {
		return at.cElem()
	}
	if e, ok := ndElemOf(t); ok { // ndarray.go
		return e
	}
	if t == tensorType {
		return C.gdl_elem{tensor: 1}
	}
	if e, ok := containerElem(t); ok { // containers.go
		return e
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return C.gdl_elem{code: C.uint8_t(godlpack.Int64.Code), bits: C.uint8_t(t.Bits())}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return C.gdl_elem{code: C.uint8_t(godlpack.Uint64.Code), bits: C.uint8_t(t.Bits())}
	case reflect.Float32, reflect.Float64:
		return C.gdl_elem{code: C.uint8_t(godlpack.Float64.Code), bits: C.uint8_t(t.Bits())}
	case reflect.Slice:
	default:
		return C.gdl_elem{}
	}
	dt, _ := godlpack.DTypeOfKind(t.Elem().Kind())
	return C.gdl_elem{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits)}
}

// typedSlice converts array arguments to []E (t is []E or a named type of it).
func typedSlice[E godlpack.Element](t reflect.Type) param {
	named := t != reflect.TypeFor[[]E]()
	return func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		rv := reflect.ValueOf(sliceOf[E](v))
		if named {
			rv = rv.Convert(t)
		}
		return rv, nil
	}
}

// sliceOf is a typed-slice argument as C checked it (ext.c, slice_arg and
// buffer_arg): n elements of exactly E's dtype at data. unsafe.Slice makes no
// new type per length.
func sliceOf[E godlpack.Element](v *C.gdl_value) []E {
	if v.n == 0 {
		if v.ncap < 0 { // None for a parameter defaulting to None (isSliceParam)
			return nil
		}
		return []E{}
	}
	return unsafe.Slice((*E)(v.data), int(v.n))
}

// borrowArg is a *consumer.Tensor argument: the trampoline owns the managed
// tensor and releases it when the call returns.
func borrowArg(v *C.gdl_value) (*consumer.Tensor, error) {
	return consumer.Borrow(v.p, v.versioned != 0)
}

// cView describes an array argument that the C trampoline has validated
// (core/validate.c), without checking or copying again: shape and strides
// alias the producer's arrays, valid until the call returns.
func cView(v *C.gdl_value) godlpack.Tensor {
	dl, flags := managedOf(v)
	t := godlpack.Tensor{
		DType:      godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes},
		Device:     godlpack.DeviceOf(dl.Device),
		ByteOffset: dl.ByteOffset,
		Shape:      dl.ShapeSlice(),
		ReadOnly:   flags&godlpack.FlagReadOnly != 0,
	}
	if dl.Strides != nil {
		t.Strides = dl.StridesSlice()
	}
	t.Data = dataOf(dl)
	return t
}

// managedOf is the DLTensor of argument v's managed tensor (v.p), and its
// flags (0 for a legacy one).
func managedOf(v *C.gdl_value) (*godlpack.DLTensor, uint64) {
	if v.versioned != 0 {
		m := (*godlpack.DLManagedTensorVersioned)(v.p)
		return &m.DLTensor, m.Flags
	}
	return &(*godlpack.DLManagedTensor)(v.p).DLTensor, 0
}

// dataOf is dl's data address as Go may hold it: addresses in the first page
// are NULL for us (godlpack.MinDataAddress), as only empty views carry them
// and Go must never hold them as pointers.
func dataOf(dl *godlpack.DLTensor) unsafe.Pointer {
	if addr := *(*uintptr)(unsafe.Pointer(&dl.Data)); addr >= godlpack.MinDataAddress {
		return dl.Data
	}
	return nil
}
