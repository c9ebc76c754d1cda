package main

/*
#include <stdint.h>
#include "godlpack/dlpack.h"
*/
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/cpython/base"
	"github.com/godlpack/godlpack/producer"
)

// reportArg is base.Report for functions whose input is arguments, not a
// tensor: a bad dtype or shape there is a ValueError, not a BufferError.
func reportArg(err error, buf *C.char, n C.int) C.int {
	k := base.Report(err, unsafe.Pointer(buf), int(n))
	if k == base.ErrBuffer {
		k = base.ErrValue
	}
	return C.int(k)
}

// exported hands a new Source's first export to C (nil on error).
func exported(src *producer.Source, err error, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	if err == nil {
		var m *godlpack.DLManagedTensorVersioned
		m, err = src.ExportVersioned(0)
		src.Close()
		*out = unsafe.Pointer(m)
	}
	return reportArg(err, errBuf, errLen)
}

func dtypeAndShape(dtype *C.char, ndim C.int, shape *C.int64_t) (godlpack.DType, []int64, error) {
	dt, err := godlpack.ParseDType(C.GoString(dtype))
	dims := make([]int64, int(ndim))
	if ndim > 0 {
		copy(dims, unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)))
	}
	return dt, dims, err
}

// gdlEmpty allocates an uninitialised (zeroed: zero-filled) tensor.
//
//export gdlEmpty
func gdlEmpty(dtype *C.char, ndim C.int, shape *C.int64_t, zeroed C.int, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	dt, dims, err := dtypeAndShape(dtype, ndim, shape)
	var src *producer.Source
	if err == nil {
		if zeroed != 0 {
			src, err = producer.Zeros(dt, dims...)
		} else {
			src, err = producer.Empty(dt, dims...)
		}
	}
	return exported(src, err, out, errBuf, errLen)
}

// gdlFull allocates a tensor filled with re+im·i converted to the dtype.
//
//export gdlFull
func gdlFull(dtype *C.char, ndim C.int, shape *C.int64_t, re, im C.double, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	dt, dims, err := dtypeAndShape(dtype, ndim, shape)
	var src *producer.Source
	if err == nil {
		src, err = producer.Full(dt, complex(float64(re), float64(im)), dims...)
	}
	return exported(src, err, out, errBuf, errLen)
}

// gdlFullInt is gdlFull for an exact integer (bits of a uint64 when unsigned).
//
//export gdlFullInt
func gdlFullInt(dtype *C.char, ndim C.int, shape *C.int64_t, v C.int64_t, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	dt, dims, err := dtypeAndShape(dtype, ndim, shape)
	var src *producer.Source
	if err == nil {
		src, err = producer.FullInt(dt, int64(v), dims...)
	}
	return exported(src, err, out, errBuf, errLen)
}

// gdlArange allocates start, start+step, ... below stop.
//
//export gdlArange
func gdlArange(dtype *C.char, start, stop, step C.double, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	dt, _, err := dtypeAndShape(dtype, 0, nil)
	var src *producer.Source
	if err == nil {
		src, err = producer.Arange(dt, float64(start), float64(stop), float64(step))
	}
	return exported(src, err, out, errBuf, errLen)
}

// gdlArangeInt is gdlArange on exact integers.
//
//export gdlArangeInt
func gdlArangeInt(dtype *C.char, start, stop, step C.int64_t, out *unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	dt, _, err := dtypeAndShape(dtype, 0, nil)
	var src *producer.Source
	if err == nil {
		src, err = producer.ArangeInt(dt, int64(start), int64(stop), int64(step))
	}
	return exported(src, err, out, errBuf, errLen)
}

// gdlGoStats reports the live Go heap for leak checks, after a collection so
// that garbage not yet collected does not look like a leak.
//
//export gdlGoStats
func gdlGoStats(heapBytes, heapObjects, numGC *C.uint64_t) {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first cycle's cleanups released
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	*heapBytes, *heapObjects, *numGC = C.uint64_t(m.HeapAlloc), C.uint64_t(m.HeapObjects), C.uint64_t(m.NumGC)
}
