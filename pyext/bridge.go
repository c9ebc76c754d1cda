package main

/*
#include <stdint.h>
#include "godlpack/dlpack.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// putError writes msg as a NUL-terminated string into the C buffer.
func putError(buf *C.char, n C.int, msg string) {
	if buf == nil || n <= 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	k := copy(b[:len(b)-1], msg)
	b[k] = 0
}

// gdlCopyCompact copies a validated view into dst (compact row-major).
//
//export gdlCopyCompact
func gdlCopyCompact(view *C.DLTensor, dst unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	t, err := consumer.ValidateDLTensor((*godlpack.DLTensor)(unsafe.Pointer(view)), true)
	if err == nil {
		var n int64
		if n, err = consumer.CompactSize(&t); err == nil {
			err = consumer.CopyCompact(unsafe.Slice((*byte)(dst), n), &t)
		}
	}
	if err != nil {
		putError(errBuf, errLen, err.Error())
		return 1
	}
	return 0
}

// Kinds of gdlCreate.
const (
	createEmpty = iota
	createZeros
	createFull
	createArange
	createFullInt
	createArangeInt
)

// gdlCreate allocates a Go-created tensor and returns a fresh managed
// tensor (DLManagedTensorVersioned*) owning it, or NULL with a message.
//
//export gdlCreate
func gdlCreate(kind C.int, dtype *C.char, ndim C.int, shape *C.int64_t, re, im, start, stop, step C.double,
	i0, i1, i2 C.int64_t, errBuf *C.char, errLen C.int) unsafe.Pointer {
	dt, err := godlpack.ParseDType(C.GoString(dtype))
	if err != nil {
		putError(errBuf, errLen, err.Error())
		return nil
	}
	dims := make([]int64, int(ndim))
	if ndim > 0 {
		copy(dims, unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)))
	}
	var src *producer.Source
	switch kind {
	case createEmpty:
		src, err = producer.Empty(dt, dims...)
	case createZeros:
		src, err = producer.Zeros(dt, dims...)
	case createFull:
		src, err = producer.Full(dt, complex(float64(re), float64(im)), dims...)
	case createArange:
		src, err = producer.Arange(dt, float64(start), float64(stop), float64(step))
	case createFullInt:
		src, err = producer.FullInt(dt, int64(i0), dims...)
	case createArangeInt:
		src, err = producer.ArangeInt(dt, int64(i0), int64(i1), int64(i2))
	}
	if err != nil {
		putError(errBuf, errLen, strings.TrimPrefix(err.Error(), "godlpack: "))
		return nil
	}
	defer src.Close()
	m, err := src.ExportVersioned(0)
	if err != nil {
		putError(errBuf, errLen, err.Error())
		return nil
	}
	return unsafe.Pointer(m)
}

// gdlDTypeName writes the NumPy-style name of a dtype.
//
//export gdlDTypeName
func gdlDTypeName(code, bits, lanes C.int, out *C.char, outLen C.int) C.int {
	putError(out, outLen, godlpack.DType{Code: uint8(code), Bits: uint8(bits), Lanes: uint16(lanes)}.String())
	return 0
}

// gdlNames writes a comma-separated list: dtype names (0) or device names (1).
//
//export gdlNames
func gdlNames(which C.int, out *C.char, outLen C.int) C.int {
	var names []string
	switch which {
	case 0:
		for _, d := range godlpack.DTypes() {
			names = append(names, d.String())
		}
	case 1:
		for _, d := range godlpack.DeviceTypes() {
			names = append(names, d.String())
		}
	default:
		return 1
	}
	putError(out, outLen, strings.Join(names, ","))
	return 0
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
