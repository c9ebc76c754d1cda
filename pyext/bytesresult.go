package pyext

// bytesresult.go: a []byte result as Python bytes, one copy: into the
// object C made before the call where the function's last two results had
// this size (ext.c's bytes_ahead); else, with the GIL held, Go makes the
// bytes object from its own memory (a Go pointer passed to C for the length
// of that call only, as cgo's rules allow); Go hands C a malloc'd copy when
// it runs without the GIL (ReleaseGIL).

/*
#include <stdlib.h>
#include "ext_pyobj.h"
#include "ext_conv.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"
)

// bytesResult is the result converter of a slice of bytes (named or not).
func bytesResult() result {
	return result{C.GDL_V_BYTES, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		return putBytes(rv.Bytes(), v)
	}}
}

// ByteArray is a []byte that a function returns as a bytearray (a
// parameter of it takes what a []byte does).
type ByteArray []byte

// byteArrayResult is ByteArray's result converter: one copy, as for bytes.
func byteArrayResult() result {
	return result{C.GDL_V_BYTEARRAY, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		return putByteArray(rv.Bytes(), v)
	}}
}

func putByteArray(b []byte, v *C.gdl_value) error {
	v.p, v.s, v.n, v.versioned = nil, nil, C.int64_t(len(b)), 0
	var data *C.char
	if len(b) > 0 {
		data = (*C.char)(unsafe.Pointer(&b[0]))
	}
	if v.serial != 0 { // the GIL is held: the one copy, into the bytearray
		if v.p = C.gdl_bytearray_new(data, C.int64_t(len(b))); v.p == nil {
			return fmt.Errorf("no memory for a bytearray result of %d bytes", len(b))
		}
		return nil
	}
	v.s = (*C.char)(C.CBytes(b))
	return nil
}

// isBytes says whether t is a slice of bytes, which Python gets as bytes.
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

// intoAhead copies b into the bytes object C made before the call (ext.c's
// bytes_ahead) when it has b's size: whether it did. The typed wrappers call
// it first (typed_gen.go), then putBytesResult when it did not.
func intoAhead(b []byte, v *C.gdl_value) bool {
	if v.data != nil && C.int64_t(len(b)) == v.ncap { // C made the object at this size (ext.c's bytes_ahead)
		copy(unsafe.Slice((*byte)(v.data), len(b)), b) // C's memory: the one copy, no call into C
		v.s, v.n, v.versioned = nil, C.int64_t(len(b)), 0
		return true
	}
	return false
}

func putBytes(b []byte, v *C.gdl_value) error {
	if intoAhead(b, v) {
		return nil
	}
	return putBytesMade(b, v)
}

// putBytesMade writes b where C made no bytes object of its size ahead.
func putBytesMade(b []byte, v *C.gdl_value) error {
	v.p, v.s, v.n, v.versioned = nil, nil, C.int64_t(len(b)), 0
	var data *C.char
	if len(b) > 0 {
		data = (*C.char)(unsafe.Pointer(&b[0]))
	}
	if v.serial != 0 { // the GIL is held: the one copy, into the bytes object
		if v.p = C.gdl_bytes_new(data, C.int64_t(len(b))); v.p == nil {
			return fmt.Errorf("no memory for a bytes result of %d bytes", len(b))
		}
		return nil
	}
	v.s = (*C.char)(C.CBytes(b))
	return nil
}
