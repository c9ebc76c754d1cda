package pyext

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// register fills f.c's count, result kinds, strings and flags, and gives f
// its id; an error (a bad option) registers nothing.
func register(f *goFunc, name, doc string, opts []Option, nparams int, kinds []byte) error {
	c := f.c
	opts = append(append([]Option{}, f.implied...), opts...) // first, so that a Require against them names both
	mask, err := writesMask(opts, unsafe.Slice((*byte)(unsafe.Pointer(&c.sig[0])), nparams))
	if err != nil {
		return err
	}
	c.writes = C.uint32_t(mask)
	if err := setArrayReqs(c, opts, nparams); err != nil { // arrays.go
		return err
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&c.kinds[0])), C.GDL_MAX_RESULTS+1), kinds)
	c.nparams = C.int(nparams)
	c.nresults = C.int(len(kinds))
	c.name = C.CString(name)
	c.doc = C.CString(doc)
	self := false
	for _, o := range opts {
		switch o {
		case ReleaseGIL:
			c.release_gil = 1
		case methodOpt:
			self = true
			c.self = 1
		}
	}
	if err := setArgs(f, opts, self); err != nil {
		return err
	}
	registry.Lock()
	var funcs []*goFunc
	if p := registry.funcs.Load(); p != nil {
		funcs = *p
	}
	c.id = C.int(len(funcs))
	funcs = append(funcs[:len(funcs):len(funcs)], f)
	registry.funcs.Store(&funcs)
	registry.Unlock()
	return nil
}

// registry holds every function defined in this process, by id: an
// append-only list, published as an immutable snapshot so calls take no lock.
var registry struct {
	sync.Mutex
	funcs atomic.Pointer[[]*goFunc]
}

type goFunc struct {
	name     string
	doc      string
	self     bool         // a method: parameter 0 is the receiver
	names    []string     // Args: the parameters' names (nil: positional only)
	defaults []string     // and defaults, as Python literals ("" for none)
	typ      reflect.Type // the Go function's type, for Stub
	call     typedCall    // set for Typed functions: no reflection per call
	fn       reflect.Value
	params   []param
	results  []result
	hasErr   bool
	implied  []Option // the requirements of registered array types' parameters (arraytype.go)
	c        *C.gdl_fn
}

// param converts one C value to the Go argument.
type param func(v *C.gdl_value, name string, i int) (reflect.Value, error)

// result converts one Go result to a C value; in holds the arguments'
// address ranges, which a returned slice must not alias.
type result struct {
	kind byte
	put  func(rv reflect.Value, v *C.gdl_value, in []span) error
}

// span is the address range of an array argument.
type span struct{ lo, hi uintptr }

var (
	errorType  = reflect.TypeFor[error]()
	tensorType = reflect.TypeFor[godlpack.Tensor]()
	borrowType = reflect.TypeFor[*consumer.Tensor]()
	sourceType = reflect.TypeFor[*producer.Source]()
)

func newGoFunc(name string, fn any, doc string, opts []Option) (*goFunc, error) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.IsVariadic() {
		return nil, fmt.Errorf("want a non-variadic func, got %T", fn)
	}
	if t.NumIn() > C.GDL_MAX_PARAMS {
		return nil, fmt.Errorf("at most %d parameters", C.GDL_MAX_PARAMS)
	}
	f := &goFunc{name: name, fn: v}
	c := (*C.gdl_fn)(C.calloc(1, C.sizeof_gdl_fn)) // lives as long as the process
	sig := unsafe.Slice((*byte)(unsafe.Pointer(&c.sig[0])), C.GDL_MAX_PARAMS+1)
	for i := 0; i < t.NumIn(); i++ {
		kind, p, err := paramFor(t.In(i))
		if err != nil {
			C.free(unsafe.Pointer(c))
			return nil, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		sig[i] = kind
		c.elem[i] = elemOf(t.In(i))
		if at := arrayTypeOf(t.In(i)); at != nil {
			f.implied = append(f.implied, at.require(i))
		}
		f.params = append(f.params, p)
	}
	nout := t.NumOut()
	if nout > 0 && t.Out(nout-1) == errorType {
		f.hasErr = true
		nout--
	}
	if nout > C.GDL_MAX_RESULTS {
		C.free(unsafe.Pointer(c))
		return nil, fmt.Errorf("at most %d results", C.GDL_MAX_RESULTS)
	}
	kinds := make([]byte, 0, nout+1)
	for i := 0; i < nout; i++ {
		r, err := resultFor(t.Out(i))
		if err != nil {
			C.free(unsafe.Pointer(c))
			return nil, fmt.Errorf("result %d: %w", i+1, err)
		}
		f.results = append(f.results, r)
		kinds = append(kinds, r.kind)
	}
	f.c = c
	if err := register(f, name, doc, opts, t.NumIn(), kinds); err != nil {
		C.free(unsafe.Pointer(c))
		return nil, err
	}
	return f, nil
}

func paramFor(t reflect.Type) (byte, param, error) {
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

func resultFor(t reflect.Type) (result, error) {
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
