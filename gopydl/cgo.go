package gopydl

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2
#include "capsule.h"
*/
import "C"

import "unsafe"

// CapsuleDestructor is the address of the C capsule destructor that
// gopydl.py's from_go gives the capsules it makes (it finds the symbol
// gopydl_capsule_destructor itself; this is for other callers).
func CapsuleDestructor() uintptr {
	return uintptr(unsafe.Pointer(C.gopydl_capsule_destructor))
}
