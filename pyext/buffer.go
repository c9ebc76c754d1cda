package pyext

// buffer.go: the buffer protocol of a Go class's objects (Class.Buffer): Go
// memory pinned while a memoryview of it lives.

/*
#include <stdint.h>
#include "ext_class.h"
#include "errkind.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
)

// bufferInfo is a class's buffer export (Class.Buffer).
type bufferInfo struct {
	fn       reflect.Value // func(*T) []E or func(*T) ([]E, []int)
	format   string        // PEP 3118 (struct module) format of E
	itemsize int
	writable bool
}

// bufferFormats are the struct-module formats of the element kinds a
// buffer exports (int and uint are 64-bit where pyext builds).
var bufferFormats = map[reflect.Kind]string{
	reflect.Bool: "?", reflect.Int8: "b", reflect.Uint8: "B", reflect.Int16: "h", reflect.Uint16: "H",
	reflect.Int32: "i", reflect.Uint32: "I", reflect.Int64: "q", reflect.Uint64: "Q", reflect.Int: "q",
	reflect.Uint: "Q", reflect.Float32: "f", reflect.Float64: "d", reflect.Complex64: "Zf", reflect.Complex128: "Zd",
}

// Buffer exports the objects' memory through Python's buffer protocol
// (memoryview(obj), np.asarray(obj), bytes(obj)) without a copy: fn is
// func(*T) []E, E a Go number type or bool, or func(*T) ([]E, []int) whose
// second result is the shape of a C-contiguous array of up to 8 dimensions
// (its product the slice's length). A view shows the slice fn returned when
// it was taken: that memory stays pinned and alive until the last view of
// it is released, even if T drops or regrows the slice meanwhile, and the
// object lives at least as long. Views are read-only unless writable;
// Python's writes through a writable view are writes to T's memory, which T
// must not read from another goroutine meanwhile without its own locking.
func (c *Class[T]) Buffer(fn any, writable bool) *Class[T] {
	ci := c.info
	t := reflect.TypeOf(fn)
	if t == nil || t.Kind() != reflect.Func {
		ci.fail(fmt.Errorf("Buffer: want func(%v) []E [, []int], got %T", ci.ptr, fn))
		return c
	}
	ok := t.NumIn() == 1 && t.In(0) == ci.ptr && (t.NumOut() == 1 || t.NumOut() == 2 && t.Out(1) == reflect.TypeFor[[]int]()) &&
		t.Out(0).Kind() == reflect.Slice
	format := ""
	if ok {
		format, ok = bufferFormats[t.Out(0).Elem().Kind()]
	}
	if !ok {
		ci.fail(fmt.Errorf("Buffer: want func(%v) []E or func(%v) ([]E, []int), E a number type or bool, got %v", ci.ptr, ci.ptr, t))
		return c
	}
	ci.buffer = &bufferInfo{fn: reflect.ValueOf(fn), format: format, itemsize: int(t.Out(0).Elem().Size()), writable: writable}
	return c
}

// gdlpyGetBuffer fills b with a view of the object h of class cls: the
// memory pinned under b.pin until gdlpyReleaseBuffer(b.pin).
//
//export gdlpyGetBuffer
func gdlpyGetBuffer(cls C.int, h C.uintptr_t, b *C.gdl_buffer, errBuf *C.char, errLen C.int, exc *C.uintptr_t) (kind C.int) {
	classes.Lock()
	ci := classes.list[cls]
	classes.Unlock()
	defer func() {
		if p := recover(); p != nil {
			kind = recovered(p, ci.name+"'s buffer", errBuf, errLen, exc)
		}
	}()
	bi := ci.buffer
	out := bi.fn.Call([]reflect.Value{reflect.ValueOf(handles.value(uintptr(h)))})
	data := out[0]
	n := data.Len()
	shape := []int{n}
	if len(out) == 2 {
		shape = out[1].Interface().([]int)
		if err := checkShape(shape, n); err != nil {
			putError(errBuf, errLen, fmt.Sprintf("%s's buffer: %v", ci.name, err))
			return C.GDL_ERR_BUFFER
		}
	}
	pin := new(runtime.Pinner)
	if n > 0 {
		first := data.Index(0).Addr()
		pin.Pin(first.Interface())
		b.buf = first.UnsafePointer()
	}
	b.nitems = C.int64_t(n)
	b.itemsize = C.int64_t(bi.itemsize)
	for i := range len(bi.format) {
		b.format[i] = C.char(bi.format[i])
	}
	b.format[len(bi.format)] = 0
	b.ndim = C.int(len(shape))
	for i, d := range shape {
		b.shape[i] = C.int64_t(d)
	}
	if !bi.writable {
		b.readonly = 1
	}
	b.pin = C.uintptr_t(handles.new(pin))
	pinned.Add(1)
	return C.GDL_ERR_NONE
}

// checkShape is nil when shape describes n items in at most GDL_BUF_MAXDIM dimensions.
func checkShape(shape []int, n int) error {
	if len(shape) == 0 || len(shape) > C.GDL_BUF_MAXDIM {
		return fmt.Errorf("shape %v: want 1 to %d dimensions", shape, C.GDL_BUF_MAXDIM)
	}
	prod := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d != 0 && prod > (1<<62)/d {
			return fmt.Errorf("shape %v overflows", shape)
		}
		prod *= d
	}
	if prod != n {
		return fmt.Errorf("shape %v holds %d items, the slice %d", shape, prod, n)
	}
	return nil
}

// gdlpyReleaseBuffer unpins the memory of a view (gdlpyGetBuffer).
//
//export gdlpyReleaseBuffer
func gdlpyReleaseBuffer(pin C.uintptr_t) {
	handles.value(uintptr(pin)).(*runtime.Pinner).Unpin()
	handles.delete(uintptr(pin))
	pinned.Add(-1)
}

// pinned counts the buffer views not yet released.
var pinned atomic.Int64

// PinnedBuffers is how many buffer views of this module's objects (Buffer)
// hold Go memory pinned: for tests that views are released.
func PinnedBuffers() int { return int(pinned.Load()) }
