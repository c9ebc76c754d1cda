package core

/*
#include "validate.h"
*/
import "C"

import (
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// msgLen bounds a refusal's message; the C core truncates longer ones.
const msgLen = 256

func refusal(kind C.int, msg *[msgLen]byte) error {
	if kind == C.GDL_OK {
		return nil
	}
	text := string(msg[:clen(msg[:])])
	_, detail, _ := strings.Cut(text, ": ")
	return &godlpack.InvalidTensorError{Kind: godlpack.RefusalKinds[kind], Detail: detail}
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// CheckVersioned applies the import rules to a versioned managed tensor
// (nil, or an *godlpack.InvalidTensorError wrapping one godlpack.Err*
// sentinel). It reads only m's own fields and its shape/strides arrays, and
// allocates nothing unless it refuses.
func CheckVersioned(m *godlpack.DLManagedTensorVersioned) error {
	p := (*C.DLManagedTensorVersioned)(unsafe.Pointer(m))
	// The first pass writes no message, so an accepted tensor costs no
	// allocation (a buffer passed to C escapes); a refusal is checked again.
	if C.gdl_check_versioned(p, nil, 0) == C.GDL_OK {
		return nil
	}
	msg := new([msgLen]byte)
	return refusal(C.gdl_check_versioned(p, (*C.char)(unsafe.Pointer(&msg[0])), msgLen), msg)
}

// CheckLegacy is CheckVersioned for a legacy managed tensor (NULL strides
// allowed: they mean compact).
func CheckLegacy(m *godlpack.DLManagedTensor) error {
	p := (*C.DLManagedTensor)(unsafe.Pointer(m))
	if C.gdl_check_legacy(p, nil, 0) == C.GDL_OK {
		return nil
	}
	msg := new([msgLen]byte)
	return refusal(C.gdl_check_legacy(p, (*C.char)(unsafe.Pointer(&msg[0])), msgLen), msg)
}

// CheckDLTensor applies the rules to a bare DLTensor; NULL strides are
// allowed only when allowNilStrides (producers older than DLPack 1.2).
func CheckDLTensor(dl *godlpack.DLTensor, allowNilStrides bool) error {
	if dl == nil {
		return godlpack.Invalid(godlpack.ErrNilPointer, "DLTensor is NULL")
	}
	a := C.int(0)
	if allowNilStrides {
		a = 1
	}
	msg := new([msgLen]byte)
	return refusal(C.gdl_check_tensor((*C.DLTensor)(unsafe.Pointer(dl)), a, (*C.char)(unsafe.Pointer(&msg[0])), msgLen), msg)
}
