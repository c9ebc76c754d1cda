package pyext

// arraytype.go: other libraries' array types as parameters and results
// (RegisterArrayType; pyext/gonum registers gonum's).

/*
#include "ext.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// ArrayType makes T, a matrix or vector type of another Go library, a
// parameter and result type of extension functions, as []E is. Adapter
// packages register theirs with RegisterArrayType from an init function
// (pyext/gonum does it for gonum's *mat.Dense and *mat.VecDense), so that
// pyext, and every extension that does not import the adapter, depends on
// no such library.
//
// A T parameter takes, zero-copy, arrays of exactly E's dtype with Ndim
// dimensions, C-contiguous and on memory the CPU can read (an NDArray[E]
// with Require(i, Ndim(Ndim), CContig), checked in C before the call):
// anything else is a BufferError naming the argument, and a non-array a
// TypeError, unless the function declares Convert (or ConvertWriteBack),
// which copies it into a conforming temporary. Require may add a Shape.
// View makes the T over that memory; like a slice, the T is valid only
// until the function returns (never keep it).
//
// A T result is exported zero-copy: Memory says which Go memory it holds,
// which becomes Python's (the function must not use it any more). Memory
// that aliases an argument is refused (ValueError), as for slices.
type ArrayType[T any, E godlpack.Element] struct {
	// Ndim is the number of dimensions of the arrays a T parameter takes
	// (1 to godlpack.MaxNDim).
	Ndim int
	// View is a T over a: C-contiguous, Ndim dimensions, a.Flat() its
	// elements in row-major order. An error refuses the argument (a
	// *BufferError or *TypeError picks the class); pyext names the argument
	// before its message.
	View func(a NDArray[E]) (T, error)
	// Memory is what a returned x holds: data from its element (0, ..., 0)
	// on, with x's shape and its strides in elements (zero or positive).
	// An error is raised (a *ValueError for a nil x, say).
	Memory func(x T) (data []E, shape, strides []int, err error)
}

// arrayType is a registered ArrayType with its types erased: what the
// conversions of params.go, results.go and typed.go call.
type arrayType struct {
	name  string
	elem  godlpack.DType
	ndim  int
	param func(v *C.gdl_value, name string, i int) (any, error)
	put   func(x any, v *C.gdl_value, in []span) error
}

var arrayTypes sync.Map // reflect.Type -> *arrayType

// arrayTypeOf is t's registration, nil when t is not registered.
func arrayTypeOf(t reflect.Type) *arrayType {
	if a, ok := arrayTypes.Load(t); ok {
		return a.(*arrayType)
	}
	return nil
}

// RegisterArrayType registers a's T (ArrayType). Call it from an init
// function: Def resolves parameter types when it runs (a package-level
// module definition runs after the init functions of the packages it
// imports). T must be a type pyext does not convert already, registered
// once.
func RegisterArrayType[T any, E godlpack.Element](a ArrayType[T, E]) error {
	t := reflect.TypeFor[T]()
	switch {
	case a.Ndim < 1 || a.Ndim > godlpack.MaxNDim:
		return fmt.Errorf("pyext.RegisterArrayType[%v]: Ndim %d, want 1 to %d", t, a.Ndim, godlpack.MaxNDim)
	case a.View == nil || a.Memory == nil:
		return fmt.Errorf("pyext.RegisterArrayType[%v]: View and Memory are both needed", t)
	}
	if arrayTypeOf(t) != nil {
		return fmt.Errorf("pyext.RegisterArrayType[%v]: registered already", t)
	}
	if _, _, err := paramFor(t); err == nil {
		return fmt.Errorf("pyext.RegisterArrayType[%v]: pyext converts %v already", t, t)
	}
	dt := godlpack.DTypeOf[E]()
	at := &arrayType{name: t.String(), elem: dt, ndim: a.Ndim}
	at.param = func(v *C.gdl_value, name string, i int) (any, error) {
		x, err := a.View(ndOf[E](v))
		if err != nil {
			return nil, argError(name, i, err)
		}
		return x, nil
	}
	at.put = func(x any, v *C.gdl_value, in []span) error {
		y, _ := x.(T) // a nil interface result is T's zero value: Memory says what that is
		data, shape, strides, err := a.Memory(y)
		if err != nil {
			return err
		}
		if len(shape) != len(strides) {
			return &ValueError{fmt.Sprintf("%v: %d sizes and %d strides", t, len(shape), len(strides))}
		}
		sh, st := make([]int64, len(shape)), make([]int64, len(shape))
		for k := range shape {
			if strides[k] < 0 {
				return &ValueError{fmt.Sprintf("%v: negative strides %v", t, strides)}
			}
			sh[k], st[k] = int64(shape[k]), int64(strides[k])
		}
		if len(data) > 0 {
			lo := uintptr(unsafe.Pointer(&data[0]))
			hi := lo + uintptr(len(data))*uintptr(dt.ItemSize())
			for _, s := range in {
				if lo < s.hi && s.lo < hi {
					return &ValueError{fmt.Sprintf("a returned %v aliases an argument's memory, which is released when the call returns: return a copy", t)}
				}
			}
		}
		src, err := producer.FromSlice(data, sh, st, false, nil) // checks that the view lies within data
		if err != nil {
			return err
		}
		return exportSource(src, v)
	}
	if _, loaded := arrayTypes.LoadOrStore(t, at); loaded {
		return fmt.Errorf("pyext.RegisterArrayType[%v]: registered already", t)
	}
	return nil
}

// argError puts "f() argument i: " before an argument's refusal, keeping
// its type (the Python class).
func argError(name string, i int, err error) error {
	msg := fmt.Sprintf("%s() argument %d: %v", name, i+1, err)
	switch err.(type) {
	case *BufferError:
		return &BufferError{msg}
	case *TypeError:
		return &TypeError{msg}
	case *ValueError:
		return &ValueError{msg}
	}
	return fmt.Errorf("%s() argument %d: %w", name, i+1, err)
}

// require is the requirement every parameter of a's type has: what View
// relies on.
func (a *arrayType) require(param int) Option {
	return byIndex(optArray, []int{param}, arraySpec{kind: specRequire, reqs: []Req{Ndim(a.ndim), CContig}})
}

// cElem is C's element record for a parameter of a's type: an N-d view.
func (a *arrayType) cElem() C.gdl_elem {
	return C.gdl_elem{code: C.uint8_t(a.elem.Code), bits: C.uint8_t(a.elem.Bits), nd: 1}
}

// adapterHint says which adapter package registers t, for the error of an
// unsupported type: the adapter is imported for its side effect only, and
// easily forgotten.
func adapterHint(t reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if strings.HasPrefix(t.PkgPath(), "gonum.org/v1/gonum/") {
		return ` (gonum's types need import _ "github.com/godlpack/godlpack/pyext/gonum")`
	}
	return ""
}
