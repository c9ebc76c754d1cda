// Package capsule implements the PyCapsule ownership rules of the DLPack
// Python protocol in C (capsule.c), for the extension module and for any Go
// code that embeds CPython. Every function here needs the GIL held.
package capsule

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include "capsule.h"
*/
import "C"

import "unsafe"

// Capsule names of the DLPack Python protocol.
const (
	NameLegacy        = "dltensor"
	NameVersioned     = "dltensor_versioned"
	NameUsedLegacy    = "used_dltensor"
	NameUsedVersioned = "used_dltensor_versioned"
)

// NewVersioned wraps m in a new capsule named "dltensor_versioned" that calls
// m's deleter when collected unused. m is consumed even on failure (nil).
func NewVersioned(m unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.gdl_capsule_versioned((*C.DLManagedTensorVersioned)(m)))
}

// NewLegacy is NewVersioned for a legacy DLManagedTensor ("dltensor").
func NewLegacy(m unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.gdl_capsule_legacy((*C.DLManagedTensor)(m)))
}

// Take renames an unused DLPack capsule to its used name and returns the
// managed tensor, which the caller now owns. ok is false with a Python
// exception set when obj is not an unused DLPack capsule.
func Take(obj unsafe.Pointer) (m unsafe.Pointer, versioned bool, ok bool) {
	var v C.int
	p := C.gdl_capsule_take((*C.PyObject)(obj), &v)
	return p, v != 0, p != nil
}
