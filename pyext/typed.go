package pyext

// typed.go: the typed wrappers' support (FuncN, ProcN in typed_gen.go): each
// parameter's and result's conversion chosen once, at definition.

/*
#include <stdlib.h>
#include "ext.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
)

//go:generate go run ../internal/gen/typed -o typed_gen.go

// Typed is a Go function wrapped with its argument and result conversions
// chosen when it is defined, so that a call uses no reflection: pass it to
// Module.Def in place of the plain function, e.g.
//
//	Def("sum", pyext.Func1(sum), "sum(x): ...")    // func([]float64) float64
//	Def("scale", pyext.Proc2(scale), "...")         // func([]float32, float32)
//	Def("add", pyext.FuncE2(add), "...")            // func(x, y []float64) ([]float64, error)
//
// FuncN, FuncEN and ProcN exist for N = 0 to 16 parameters, the tuple
// wrappers FuncNRm and FuncENRm for N = 0 to 8 (typed_gen.go, written by
// internal/gen/typed); a method's receiver is its first parameter, so a
// method takes up to 15 after it: Func3((*Index).Search) wraps
// func(*Index, []float64, int) R.
//
// Parameter and result types follow Def's rules. A plain function given to
// Def works the same, through reflection (about 0.5-0.8 µs more per call).
type Typed struct {
	build func(name, doc string, opts []Option) (*goFunc, error)
	typ   reflect.Type // the wrapped function's, for Module.Stub
}

// typedCall runs a typed function on converted arguments and writes its
// results: how many, and the error to raise.
type typedCall func(in, out []cValue, name string) (int, error)

// cValue is C's gdl_value, for typed_gen.go (no cgo there).
type cValue = C.gdl_value

type argConv[A any] struct {
	kind byte
	elem C.gdl_elem // what C checks a typed-slice argument against
	arr  *arrayType // a registered array type (arraytype.go)
	fast fastConv   // into's own conversion, or fastNone: conv's
	at   restKind   // where the argument lies at rest (restOf), at off
	off  uintptr
	typ  unsafe.Pointer // restHandle: the dynamic type word of an any holding an A
	conv func(v *C.gdl_value, name string, i int) (A, error)
}

// fastConv names the conversions into makes itself, with no call through
// a func value: through one, the destination would escape to the heap (an
// allocation per call), and a large argument (a godlpack.Tensor) was copied
// once per hop, each copy stalling on the stores just before it.
type fastConv uint8

const (
	fastNone    fastConv = iota
	fastFloat64          // float64: v.f itself (restOf)
	fastFloat32          // float32: v.f, which C range-checked
	fastInt64            // int64, and int on a 64-bit platform: v.i itself (restOf)
	fastInt              // int on a 32-bit platform: v.i, which C range-checked
	fastBool             // bool: v.i != 0
	fastSlice            // []E of an element type: data, n elements (restOf; empty: into)
	fastTensor           // godlpack.Tensor (tensorArg)
	fastObj              // *T of a Go class: its handle's value
	fastND               // NDArray[T]: C's view (ndRef)
)

// restOf says where the function's argument already lies in memory that C
// wrote before the call into Go: the value itself for a float64 (v.f), an
// int64 or int (v.i) and a typed slice (its header: v.data, n, ncap; an
// empty one, data NULL, is into's []E{}), or behind a pointer for an NDArray
// (C's view, v.st) and a Tensor from NumPy's fields (C's image, v.img, NULL
// when C made none), on a 64-bit platform. The typed wrappers pass the
// function that memory (one copy, from memory at rest: a large argument
// copied right after its fields were stored stalls on store forwarding)
// with no call, and convert the others with into. The test is written out
// in typed_gen.go: Go does not inline calls in the wrappers' closures once
// the wrapper is inlined into its caller.
func restOf(fast fastConv) (at restKind, off uintptr) {
	var v C.gdl_value
	switch fast {
	case fastFloat64:
		return restValue, unsafe.Offsetof(v.f)
	case fastInt64:
		return restValue, unsafe.Offsetof(v.i)
	case fastND:
		if ndImaged {
			return restPointer, unsafe.Offsetof(v.st)
		}
	case fastTensor:
		return restPointer, unsafe.Offsetof(v.img)
	case fastSlice:
		if unsafe.Sizeof(uintptr(0)) == 8 { // C's int64 n, ncap: a 64-bit header
			return restHeader, unsafe.Offsetof(v.data)
		}
	}
	return restNone, 0
}

// restKind is how a typed wrapper finds an argument at rest (restOf).
type restKind uint8

const (
	restNone    restKind = iota // into converts it
	restValue                   // at off in the gdl_value
	restPointer                 // at the pointer at off in the gdl_value, unless NULL
	restHeader                  // a slice's header at off in the gdl_value, unless its pointer is NULL (empty)
	restBytes                   // results: a []byte, which putBytes writes (typed_gen.go calls it directly)
	restHandle                  // a *T of a Go class: the pointer its handle (v.i) boxes, found by handles.ref
)

// into converts argument i (v) into *dst, which the typed wrappers keep on
// their stack, when the argument is not at rest in C's memory (restOf).
func (ac *argConv[A]) into(v *C.gdl_value, name string, i int, dst *A) (err error) {
	p := unsafe.Pointer(dst)
	switch ac.fast {
	case fastFloat32:
		*(*float32)(p) = float32(v.f)
	case fastInt:
		*(*int)(p) = int(v.i)
	case fastBool:
		*(*bool)(p) = v.i != 0
	case fastSlice:
		// A slice's header does not depend on its element type: ([]byte
		// of n) has the header of ([]E of n), which C checked the memory
		// holds (sliceOf).
		if v.n == 0 && v.ncap < 0 { // None for a parameter defaulting to None (isSliceParam)
			*(*[]byte)(p) = nil
		} else if v.n == 0 {
			*(*[]byte)(p) = []byte{}
		} else {
			*(*[]byte)(p) = unsafe.Slice((*byte)(v.data), int(v.n))
		}
	case fastTensor:
		tensorInto((*godlpack.Tensor)(p), v)
	case fastObj:
		*dst = handles.value(uintptr(v.i)).(A)
	case fastND: // 32-bit: a converted copy
		*dst, err = ac.conv(v, name, i)
	default:
		*dst, err = ac.conv(v, name, i)
	}
	return err
}

type resConv[R any] struct {
	kind  byte // 0: no Python value (an error result)
	isErr bool
	// at restValue: a float64 (C's f) or an int64 or int (i, on a 64-bit
	// platform) result, the same bits as C's field at off in the
	// gdl_value, which typed_gen.go stores with no call. Else put
	// converts it.
	at  restKind
	off uintptr
	put func(r R, v *C.gdl_value, in []C.gdl_value) error
}

// typeWord is the type word of an any holding an A (A's type descriptor).
func typeWord[A any]() unsafe.Pointer {
	var z A
	e := any(z)
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&e))[0]
}

// as is x as A, which its caller knows to be T: unlike any(x).(A), it
// allocates nothing.
func as[A, T any](x T) A { return *(*A)(unsafe.Pointer(&x)) }

func argOf[A any]() (argConv[A], error) {
	t := reflect.TypeFor[A]()
	kind, p, err := paramFor(t)
	if err != nil {
		return argConv[A]{}, err
	}
	ac := argConv[A]{kind: kind, elem: elemOf(t)}
	var z A
	if kind == C.GDL_V_OBJ { // a *T of a Go class (class.go): its handle, no reflection
		ac.fast = fastObj
		if t.Kind() == reflect.Pointer { // an any holds it as its data word (handles.ref)
			ac.at, ac.typ = restHandle, typeWord[A]()
		}
		return ac, nil
	}
	if isAnyParam(t) { // a Python value tree (anyconv.go), no reflection
		ac.conv = func(v *C.gdl_value, _ string, _ int) (A, error) { return anyArg[A](v), nil }
		return ac, nil
	}
	if at := arrayTypeOf(t); at != nil { // no reflection: View's T, boxed
		ac.arr = at
		ac.conv = func(v *C.gdl_value, name string, i int) (A, error) {
			x, err := at.param(v, name, i)
			a, _ := x.(A)
			return a, err
		}
		return ac, nil
	}
	switch any(z).(type) {
	case float64:
		ac.fast = fastFloat64
	case float32:
		ac.fast = fastFloat32
	case int64:
		ac.fast = fastInt64
	case int:
		ac.fast = fastInt
		if unsafe.Sizeof(int(0)) == 8 {
			ac.fast = fastInt64
		}
	case bool:
		ac.fast = fastBool
	case []float64, []float32, []int64, []int32, []uint8, []complex128:
		ac.fast = fastSlice
	case godlpack.Tensor:
		ac.fast = fastTensor
	case *consumer.Tensor:
		ac.conv = func(v *C.gdl_value, _ string, _ int) (A, error) {
			ct, err := borrowArg(v)
			return as[A](ct), err
		}
	case complex128, complex64, time.Duration, time.Time: // values.go's, without reflection's boxing
		ac.conv = func(v *C.gdl_value, _ string, _ int) (A, error) { return valueArg[A](v), nil }
	default:
		if c, ok := ndConv[A](); ok { // an NDArray (ndarray.go)
			ac.fast, ac.conv = fastND, c
			break
		}
		// Everything else (other widths, named types, strings) goes through
		// its reflection converter.
		ac.conv = func(v *C.gdl_value, name string, i int) (A, error) {
			rv, err := p(v, name, i)
			if err != nil {
				return z, err
			}
			return rv.Interface().(A), nil
		}
	}
	ac.at, ac.off = restOf(ac.fast)
	return ac, nil
}

func resOf[R any]() (resConv[R], error) {
	t := reflect.TypeFor[R]()
	if t == errorType {
		return resConv[R]{isErr: true}, nil
	}
	r, err := resultFor(t)
	if err != nil {
		return resConv[R]{}, err
	}
	if isAnyResult(t) { // a Python value tree (anyconv.go)
		return resConv[R]{kind: r.kind, put: func(x R, v *C.gdl_value, _ []C.gdl_value) error { return putAny(any(x), v) }}, nil
	}
	var z R
	var v C.gdl_value
	switch any(z).(type) {
	case float64:
		return resConv[R]{kind: r.kind, at: restValue, off: unsafe.Offsetof(v.f), put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			v.f = C.double(as[float64](x))
			return nil
		}}, nil
	case int:
		at := restValue
		if unsafe.Sizeof(int(0)) != 8 {
			at = restNone
		}
		return resConv[R]{kind: r.kind, at: at, off: unsafe.Offsetof(v.i), put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			v.i = C.int64_t(as[int](x))
			return nil
		}}, nil
	case int64:
		return resConv[R]{kind: r.kind, at: restValue, off: unsafe.Offsetof(v.i), put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			v.i = C.int64_t(as[int64](x))
			return nil
		}}, nil
	case []byte: // bytesresult.go, without reflection
		return resConv[R]{kind: r.kind, at: restBytes, put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			return putBytes(as[[]byte](x), v)
		}}, nil
	case complex128, complex64, time.Duration, time.Time: // values.go's, without reflection's boxing
		return resConv[R]{kind: r.kind, put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			return putValue(x, v)
		}}, nil
	case bool:
		return resConv[R]{kind: r.kind, put: func(x R, v *C.gdl_value, _ []C.gdl_value) error {
			v.i = 0
			if as[bool](x) {
				v.i = 1
			}
			return nil
		}}, nil
	}
	return resConv[R]{kind: r.kind, put: func(x R, v *C.gdl_value, in []C.gdl_value) error {
		var spans []span
		if r.kind == C.GDL_V_ARRAY {
			spans = arraySpans(in)
		}
		return r.put(reflect.ValueOf(x), v, spans)
	}}, nil
}

// arraySpans is the address ranges of the array arguments (a returned slice
// must not alias them).
func arraySpans(in []C.gdl_value) []span {
	var out []span
	for i := range in {
		if in[i].data != nil { // a typed slice: i bytes
			lo := uintptr(in[i].data)
			out = append(out, span{lo, lo + uintptr(in[i].i)})
			continue
		}
		var t godlpack.Tensor
		switch {
		case in[i].img != nil: // C's image of a Tensor argument
			t = *(*godlpack.Tensor)(in[i].img)
		case in[i].p != nil:
			t = cView(&in[i])
		default:
			continue
		}
		if t.Data == nil {
			continue
		}
		_, hi, err := t.ByteSpan()
		if err == nil {
			lo := uintptr(t.Data) + uintptr(t.ByteOffset)
			out = append(out, span{lo, lo + uintptr(hi)})
		}
	}
	return out
}

// putBytesResult writes a []byte result (resConv.at restBytes), which
// typed_gen.go calls with no call through put, when C made no bytes object
// of its size ahead (intoAhead, which typed_gen.go tries first).
func putBytesResult(b []byte, out []C.gdl_value) (int, error) {
	if err := putBytesMade(b, &out[0]); err != nil {
		return 0, err
	}
	return 1, nil
}

// putResult converts one result; an error result is returned, not written.
func putResult[R any](rc resConv[R], r R, out []C.gdl_value, in []C.gdl_value) (int, error) {
	if rc.isErr {
		if err, _ := any(r).(error); err != nil {
			return 0, err
		}
		return 0, nil
	}
	if err := rc.put(r, &out[0], in); err != nil {
		return 0, err
	}
	return 1, nil
}

// tupleOf is the converter of one result of a tuple wrapper (FuncNRm): a
// value, never the error (FuncENRm takes that last).
func tupleOf[R any]() (resConv[R], error) {
	rc, err := resOf[R]()
	if err == nil && rc.isErr {
		err = fmt.Errorf("an error in a tuple of results: make it the last result and use FuncE")
	}
	return rc, err
}

// putItem converts one result of a tuple into out: a float64, int64 or int
// stored with no call (resConv.at), any other converted by put.
func putItem[R any](rc resConv[R], r R, out *C.gdl_value, in []C.gdl_value) error {
	if rc.at == restValue {
		*(*R)(unsafe.Add(unsafe.Pointer(out), rc.off)) = r
		return nil
	}
	return rc.put(r, out, in)
}

// paramSpec is a parameter's signature letter and element type for C.
type paramSpec struct {
	kind byte
	elem C.gdl_elem
	arr  *arrayType
}

func (a argConv[A]) spec() paramSpec { return paramSpec{a.kind, a.elem, a.arr} }

// newTyped makes the C descriptor for a typed function of one result
// (kind) or none (0).
func newTyped(name, doc string, opts []Option, params []paramSpec, kind byte, call typedCall) (*goFunc, error) {
	var kinds []byte
	if kind != 0 {
		kinds = []byte{kind}
	}
	return newTypedTuple(name, doc, opts, params, kinds, call)
}

// newTypedTuple makes the C descriptor for a typed function of results of
// kinds, a tuple in Python when there are several.
func newTypedTuple(name, doc string, opts []Option, params []paramSpec, kinds []byte, call typedCall) (*goFunc, error) {
	f := &goFunc{name: name, call: call}
	f.c = (*C.gdl_fn)(C.calloc(1, C.sizeof_gdl_fn)) // lives as long as the process
	for i, p := range params {
		f.c.sig[i] = C.char(p.kind)
		f.c.elem[i] = p.elem
		if p.arr != nil {
			f.implied = append(f.implied, p.arr.require(i))
		}
	}
	if err := register(f, name, doc, opts, len(params), kinds); err != nil {
		C.free(unsafe.Pointer(f.c))
		return nil, err
	}
	return f, nil
}

func typedErr(what string, i int, err error) error { return fmt.Errorf("%s %d: %w", what, i, err) }
