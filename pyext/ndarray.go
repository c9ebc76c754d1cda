package pyext

// ndarray.go: NDArray, an N-d zero-copy view of an array argument, with its
// indexing helpers.

/*
#include "ext.h"
#include "ext_arrays.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// NDArray is an N-dimensional array parameter: a zero-copy view of the
// argument's memory with its shape and strides (in elements), so that a
// function takes a (rows, cols) array without flattening it:
//
//	func rownorms(x pyext.NDArray[float64]) []float64 {
//		out := make([]float64, x.Dim(0))
//		for i := range out {
//			for j := 0; j < x.Dim(1); j++ {
//				out[i] += x.At2(i, j) * x.At2(i, j)
//			}
//			out[i] = math.Sqrt(out[i])
//		}
//		return out
//	}
//	Def("rownorms", pyext.Func1(rownorms), doc, pyext.ReadOnlyArgs, pyext.Require(0, pyext.Shape(-1, 3)))
//
// It takes memory the CPU can read, of exactly T's dtype, with any strides
// (negative, zero) in whole elements and aligned, unless Require asks for
// a layout (CContig, FContig) or a shape; Convert copies other arguments
// into a conforming temporary.
//
// Like a slice parameter, an NDArray is valid only until the function
// returns: the memory is the caller's (or a temporary's) and is released
// then. Never keep it, nor a slice from Flat or Row, nor return them
// (copy what must outlive the call). Its methods panic (RuntimeError in
// Python) on indices out of range, as slices do.
type NDArray[T godlpack.Element] struct {
	buf     []T // every element the view reaches, from the lowest address
	off     int // buf index of element (0, ..., 0)
	shape   []int
	strides []int
}

// NDArrayOf is a C-contiguous NDArray over data (for tests of functions
// that take one): the product of shape must be len(data).
func NDArrayOf[T godlpack.Element](data []T, shape ...int) (NDArray[T], error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return NDArray[T]{}, fmt.Errorf("pyext.NDArrayOf: negative size in shape %v", shape)
		}
		n *= d
	}
	if n != len(data) {
		return NDArray[T]{}, fmt.Errorf("pyext.NDArrayOf: shape %v holds %d elements, data %d", shape, n, len(data))
	}
	a := NDArray[T]{buf: data, shape: append([]int{}, shape...), strides: make([]int, len(shape))}
	s := 1
	for k := len(shape) - 1; k >= 0; k-- {
		a.strides[k] = s
		s *= shape[k]
	}
	return a, nil
}

// NDArrayStrided is an NDArray over data whose element (0, ..., 0) is
// data[off], with the given strides in elements (for tests): every element
// it reaches must lie in data.
func NDArrayStrided[T godlpack.Element](data []T, off int, shape, strides []int) (NDArray[T], error) {
	if len(shape) != len(strides) {
		return NDArray[T]{}, fmt.Errorf("pyext.NDArrayStrided: %d sizes and %d strides", len(shape), len(strides))
	}
	lo, hi, empty := off, off, false
	for k, d := range shape {
		if d < 0 {
			return NDArray[T]{}, fmt.Errorf("pyext.NDArrayStrided: negative size in shape %v", shape)
		}
		if d == 0 {
			empty = true
			continue
		}
		if e := (d - 1) * strides[k]; e < 0 {
			lo += e
		} else {
			hi += e
		}
	}
	if !empty && (lo < 0 || hi >= len(data)) {
		return NDArray[T]{}, fmt.Errorf("pyext.NDArrayStrided: elements %d to %d, data has %d", lo, hi, len(data))
	}
	return NDArray[T]{buf: data, off: off, shape: append([]int{}, shape...), strides: append([]int{}, strides...)}, nil
}

// Ndim is the number of dimensions.
func (a NDArray[T]) Ndim() int { return len(a.shape) }

// Shape is the size of each dimension (do not modify it).
func (a NDArray[T]) Shape() []int { return a.shape }

// Dim is the size of dimension k.
func (a NDArray[T]) Dim(k int) int { return a.shape[k] }

// Strides is the step of each dimension in elements (do not modify it).
func (a NDArray[T]) Strides() []int { return a.strides }

// Size is the number of elements.
func (a NDArray[T]) Size() int {
	n := 1
	for _, d := range a.shape {
		n *= d
	}
	return n
}

func (a NDArray[T]) index(idx []int) int {
	if len(idx) != len(a.shape) {
		panic(fmt.Sprintf("pyext.NDArray: %d indices for %d dimensions", len(idx), len(a.shape)))
	}
	k := a.off
	for d, i := range idx {
		if uint(i) >= uint(a.shape[d]) {
			panic(fmt.Sprintf("pyext.NDArray: index %d out of range for dimension %d of size %d", i, d, a.shape[d]))
		}
		k += i * a.strides[d]
	}
	return k
}

// At is the element at idx (one index per dimension).
func (a NDArray[T]) At(idx ...int) T { return a.buf[a.index(idx)] }

// Set writes v at idx (the function must be allowed to write the
// argument: pyext.Writes, or no ReadOnlyArgs).
func (a NDArray[T]) Set(v T, idx ...int) { a.buf[a.index(idx)] = v }

// Ptr is the address of the element at idx.
func (a NDArray[T]) Ptr(idx ...int) *T { return &a.buf[a.index(idx)] }

func (a NDArray[T]) index2(i, j int) int {
	if len(a.shape) != 2 {
		panic(fmt.Sprintf("pyext.NDArray: 2 indices for %d dimensions", len(a.shape)))
	}
	if uint(i) >= uint(a.shape[0]) || uint(j) >= uint(a.shape[1]) {
		panic(fmt.Sprintf("pyext.NDArray: index (%d, %d) out of range for shape (%d, %d)", i, j, a.shape[0], a.shape[1]))
	}
	return a.off + i*a.strides[0] + j*a.strides[1]
}

// At2 is At(i, j) for 2-d arrays, without the variadic indices.
func (a NDArray[T]) At2(i, j int) T { return a.buf[a.index2(i, j)] }

// Set2 is Set(v, i, j) for 2-d arrays.
func (a NDArray[T]) Set2(v T, i, j int) { a.buf[a.index2(i, j)] = v }

// Row is row i of a 2-d array as a slice (aliasing the array): its
// elements must be adjacent (stride 1 along dimension 1, as CContig
// guarantees), else Row panics; use At2 for other layouts.
func (a NDArray[T]) Row(i int) []T {
	if len(a.shape) != 2 || uint(i) >= uint(a.shape[0]) {
		panic(fmt.Sprintf("pyext.NDArray: row %d of shape %v", i, a.shape))
	}
	if a.shape[1] > 1 && a.strides[1] != 1 {
		panic(fmt.Sprintf("pyext.NDArray: row elements are %d apart (strides %v): use At2, or Require CContig", a.strides[1], a.strides))
	}
	start := a.off + i*a.strides[0]
	return a.buf[start : start+a.shape[1] : start+a.shape[1]]
}

// IsCContig reports whether the array is C-contiguous (row-major, compact).
func (a NDArray[T]) IsCContig() bool { return a.compact(false) }

// IsFContig reports whether the array is Fortran-contiguous (column-major, compact).
func (a NDArray[T]) IsFContig() bool { return a.compact(true) }

func (a NDArray[T]) compact(fortran bool) bool {
	_, ok := a.layout(fortran)
	return ok
}

// layout is the number of elements and whether the array is compact in C
// (fortran false) or Fortran order, in one pass (Flat's per-call cost).
func (a NDArray[T]) layout(fortran bool) (int, bool) {
	n, ok, nd := 1, true, len(a.shape)
	for i := 0; i < nd; i++ {
		k := nd - 1 - i
		if fortran {
			k = i
		}
		if a.shape[k] != 1 && a.strides[k] != n {
			ok = false
		}
		n *= a.shape[k]
	}
	return n, ok || n == 0 // empty: any strides
}

// Flat is the elements in row-major order as one slice (aliasing the
// array) when the array is C-contiguous; nil and false otherwise.
func (a NDArray[T]) Flat() ([]T, bool) {
	n, ok := a.layout(false)
	if !ok {
		return nil, false
	}
	if n == 0 {
		return []T{}, true
	}
	return a.buf[a.off : a.off+n : a.off+n], true
}

// ndArrayer is implemented by every NDArray type: how reflection and the
// typed wrappers recognise one and fill it from C.
type ndArrayer interface {
	ndElem() godlpack.DType
	ndInto(dst unsafe.Pointer, v *C.gdl_value)
	ndFunc() any // ndArg[T]: the typed wrappers' converter
}

var ndArrayType = reflect.TypeFor[ndArrayer]()

func (NDArray[T]) ndElem() godlpack.DType { return godlpack.DTypeOf[T]() }

func (NDArray[T]) ndInto(dst unsafe.Pointer, v *C.gdl_value) { *(*NDArray[T])(dst) = ndOf[T](v) }

func (NDArray[T]) ndFunc() any { return ndArg[T] }

// ndArg is ndOf with a converter's signature: the typed wrappers call it
// with no closure between.
func ndArg[T godlpack.Element](v *C.gdl_value, _ string, _ int) (NDArray[T], error) {
	return ndOf[T](v), nil
}

// ndImaged: NDArray[T] has the layout of C's gdl_view (a 64-bit int), so
// that C's view is the argument itself (images_test.go checks it).
const ndImaged = unsafe.Sizeof(int(0)) == 8

func init() {
	if ndImaged && !ndLayoutMatches() {
		panic("pyext: NDArray's layout differs from C's gdl_view")
	}
}

// ndLayoutMatches compares NDArray's fields with C's view.
func ndLayoutMatches() bool {
	var a NDArray[float64]
	var w C.gdl_view
	return unsafe.Sizeof(a) == unsafe.Sizeof(w) && unsafe.Offsetof(a.off) == unsafe.Offsetof(w.off) &&
		unsafe.Offsetof(a.shape) == unsafe.Offsetof(w.shape) && unsafe.Offsetof(a.strides) == unsafe.Offsetof(w.strides)
}

// ndRef is an NDArray argument as C checked and described it
// (ext_arrays.c): C's view itself, whose shape and strides are C's arrays and
// whose buf the argument's memory, all of which live until the call returns,
// as the view may. A 32-bit build converts it into *tmp.
func ndRef[T godlpack.Element](v *C.gdl_value, tmp *NDArray[T]) *NDArray[T] {
	if ndImaged {
		return (*NDArray[T])(v.st)
	}
	w := (*C.gdl_view)(v.st)
	nd := int(w.shape_len)
	dims := make([]int, 2*nd)
	sh := unsafe.Slice((*int64)(unsafe.Pointer(w.shape)), nd)
	st := unsafe.Slice((*int64)(unsafe.Pointer(w.strides)), nd)
	for k := 0; k < nd; k++ {
		dims[k], dims[nd+k] = int(sh[k]), int(st[k]) // validated: they fit
	}
	*tmp = NDArray[T]{off: int(w.off), shape: dims[:nd:nd], strides: dims[nd:]}
	if w.buf != nil {
		tmp.buf = unsafe.Slice((*T)(w.buf), int(w.buf_len))
	}
	return tmp
}

// ndOf is the NDArray argument v.
func ndOf[T godlpack.Element](v *C.gdl_value) NDArray[T] {
	var tmp NDArray[T]
	return *ndRef(v, &tmp)
}

// ndElemOf is C's element record for an NDArray parameter type.
func ndElemOf(t reflect.Type) (C.gdl_elem, bool) {
	if t.Kind() != reflect.Struct || !t.Implements(ndArrayType) || t.PkgPath() != ndArrayType.PkgPath() ||
		!strings.HasPrefix(t.Name(), "NDArray[") {
		return C.gdl_elem{}, false
	}
	dt := reflect.Zero(t).Interface().(ndArrayer).ndElem()
	return C.gdl_elem{code: C.uint8_t(dt.Code), bits: C.uint8_t(dt.Bits), nd: 1}, true
}

// ndParam converts array arguments to the NDArray type t (reflection path).
func ndParam(t reflect.Type) (param, bool) {
	if _, ok := ndElemOf(t); !ok {
		return nil, false
	}
	z := reflect.Zero(t).Interface().(ndArrayer)
	return func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		rv := reflect.New(t)
		z.ndInto(rv.UnsafePointer(), v)
		return rv.Elem(), nil
	}, true
}

// ndConv is the typed wrappers' converter for A when A is an NDArray.
func ndConv[A any]() (func(v *C.gdl_value, name string, i int) (A, error), bool) {
	var z A
	nd, ok := any(z).(ndArrayer)
	if !ok {
		return nil, false
	}
	of, ok := nd.ndFunc().(func(*C.gdl_value, string, int) (A, error)) // A is NDArray[T] itself
	return of, ok
}
