package consumer

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2
#include "validate.h"
*/
import "C"

import (
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// The C validator (validate.c) learns the known dtypes and devices from Go,
// so there is one list of them.
func init() {
	for _, d := range godlpack.DTypes() {
		C.gdl_validate_register_dtype(C.uint8_t(d.Code), C.uint8_t(d.Bits))
	}
	for _, d := range godlpack.DeviceTypes() {
		C.gdl_validate_register_device(C.int32_t(d))
	}
}

var cKinds = []error{nil, godlpack.ErrNilPointer, godlpack.ErrVersion, godlpack.ErrNDim, godlpack.ErrShape,
	godlpack.ErrStrides, godlpack.ErrOverflow, godlpack.ErrDType, godlpack.ErrLanes, godlpack.ErrDevice,
	godlpack.ErrNilData}

func cError(kind C.int, msg []byte) error {
	if kind == 0 {
		return nil
	}
	text := string(msg[:clen(msg)])
	_, detail, _ := strings.Cut(text, ": ")
	return &godlpack.InvalidTensorError{Kind: cKinds[kind], Detail: detail}
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// CheckVersionedC runs the C form of CheckVersioned (validate.c), which the
// CPython module calls without crossing into Go. Same verdicts as the Go one.
func CheckVersionedC(m *godlpack.DLManagedTensorVersioned) error {
	var msg [256]byte
	k := C.gdl_check_versioned((*C.DLManagedTensorVersioned)(unsafe.Pointer(m)), (*C.char)(unsafe.Pointer(&msg[0])), 256)
	return cError(k, msg[:])
}

// CheckLegacyC is the C form of CheckLegacy.
func CheckLegacyC(m *godlpack.DLManagedTensor) error {
	var msg [256]byte
	k := C.gdl_check_legacy((*C.DLManagedTensor)(unsafe.Pointer(m)), (*C.char)(unsafe.Pointer(&msg[0])), 256)
	return cError(k, msg[:])
}
