package pyext

// bytesresult.go: a []byte result as Python bytes, one copy: with the GIL
// held, C makes the bytes object from Go's memory right after the call
// returns (lent, below) or Go makes it (free-threaded builds, large
// results); Go hands C a malloc'd copy when it runs without the GIL
// (ReleaseGIL).

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

// lent keeps alive the results whose memory Go lends C (lend): C copies
// them into bytes objects right after the call into Go returns, before any
// Python code runs, with the GIL held all the while, so no other call
// writes here before C is done (calls that lend are those C marks with
// serial 2: the GIL held, a build with a GIL). Go's heap does not move
// objects; each entry is kept until lendNext comes round to it again (a
// call has at most GDL_MAX_RESULTS results), at most lendMax bytes each.
var (
	lent     [C.GDL_MAX_RESULTS][]byte
	lendNext uint
)

// lendMax is the largest result lent: beyond it the copy dwarfs the call
// into C that lending saves, and lent memory would stay alive longer.
const lendMax = 64 << 10

// lend passes C b's address and length for a bytes result (kind: bytes or
// bytearray) that C makes itself, with no call from Go into C: 1 when lent
// (serial 2 and b small enough), the address as an integer (v.i), since C
// keeps it only until the call's results are made.
func lend(b []byte, v *C.gdl_value) bool {
	if v.serial != 2 || len(b) > lendMax {
		return false
	}
	lent[lendNext%C.GDL_MAX_RESULTS] = b
	lendNext++
	v.p, v.s, v.n, v.versioned, v.i = nil, nil, C.int64_t(len(b)), 2, 0
	if len(b) > 0 {
		v.i = C.int64_t(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	}
	return true
}

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
	if lend(b, v) {
		return nil
	}
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

func putBytes(b []byte, v *C.gdl_value) error {
	if lend(b, v) {
		return nil
	}
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
