package producer

/*
#include <stdint.h>
*/
import "C"

import "runtime/cgo"

// releaser is what a Go-memory owner's cgo.Handle points at.
type releaser interface{ release() }

// godlpackReleaseHandle is called from C (owner.c) when the last export of
// Go memory is deleted, on whatever thread did it.
//
//export godlpackReleaseHandle
func godlpackReleaseHandle(h C.uintptr_t) {
	hd := cgo.Handle(h)
	r := hd.Value().(releaser)
	hd.Delete()
	r.release()
}
