package pyext

// bigint.go: *big.Int as a Python int of any size. Values in int64 pass as
// one; larger ones as hex text, which CPython (int.__format__, int(s, 16))
// and math/big read and write in linear time (ext_conv.c).

// #include "ext.h"
import "C"

import (
	"fmt"
	"math/big"
	"reflect"
	"unsafe"
)

func bigIntParam(v *C.gdl_value, name string, i int) (reflect.Value, error) {
	if v.versioned == 0 {
		return reflect.ValueOf(big.NewInt(int64(v.i))), nil
	}
	text := unsafe.String((*byte)(unsafe.Pointer(v.s)), int(v.n)) // held by C for the call; SetString keeps none of it
	x, ok := new(big.Int).SetString(text, 0)
	if !ok { // not reached: CPython wrote it
		return reflect.Value{}, &ValueError{fmt.Sprintf("%s() argument %d: an int's hex text %.40q unread", name, i+1, text)}
	}
	return reflect.ValueOf(x), nil
}

func putBigInt(rv reflect.Value, v *C.gdl_value, _ []span) error {
	x := rv.Interface().(*big.Int)
	if x == nil {
		return &ValueError{"a nil *big.Int was returned"}
	}
	if x.IsInt64() {
		v.i, v.versioned = C.int64_t(x.Int64()), 0
		return nil
	}
	text := x.Text(16)
	v.s, v.n, v.versioned = C.CString(text), C.int64_t(len(text)), 1
	return nil
}
