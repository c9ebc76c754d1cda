package core

/*
#include <stdint.h>
#include "owner.h"
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// Owner is a C owner record (gdl_owner*): it keeps the memory behind one or
// more views alive until its last reference is dropped. A zero Owner is nil.
type Owner struct{ p *C.gdl_owner }

// Nil reports whether the owner could not be made (out of memory).
func (o Owner) Nil() bool { return o.p == nil }

// Ptr is the gdl_owner* for C code.
func (o Owner) Ptr() unsafe.Pointer { return unsafe.Pointer(o.p) }

// Decref drops one reference; the last one releases the memory.
func (o Owner) Decref() { C.gdl_owner_decref(o.p) }

// Alignment of AllocOwner's data (JAX/XLA copies less-aligned buffers).
const Alignment = C.GDL_ALIGN

// AllocOwner allocates nbytes of C memory aligned to Alignment, owned by the
// returned owner (one reference). zeroed asks for zero bytes; large blocks
// are then zeroed lazily by the kernel, like calloc.
func AllocOwner(nbytes uint64, zeroed bool) (Owner, unsafe.Pointer) {
	var data unsafe.Pointer
	var o *C.gdl_owner
	if zeroed {
		o = C.gdl_owner_calloc(C.uint64_t(nbytes), &data)
	} else {
		o = C.gdl_owner_alloc(C.uint64_t(nbytes), &data)
	}
	return Owner{o}, data
}

// Releaser is Go memory kept alive (pinned) until its owner is released.
type Releaser interface{ Release() }

// GoOwner makes an owner whose release calls r.Release, through a
// cgo.Handle (manager_ctx never holds a Go pointer).
func GoOwner(r Releaser) Owner {
	h := cgo.NewHandle(r)
	o := C.gdl_owner_go(C.uintptr_t(h))
	if o == nil {
		h.Delete()
	}
	return Owner{o}
}

// godlpackReleaseHandle is called by owner.c when the last reference to Go
// memory is dropped, on whatever thread did it.
//
//export godlpackReleaseHandle
func godlpackReleaseHandle(h C.uintptr_t) {
	hd := cgo.Handle(h)
	r := hd.Value().(Releaser)
	hd.Delete()
	r.Release()
}

// ExportVersioned makes a fresh DLManagedTensorVersioned describing view,
// holding a new reference to o; nil when out of memory.
func ExportVersioned(view *godlpack.DLTensor, flags uint64, o Owner) *godlpack.DLManagedTensorVersioned {
	m := C.gdl_export_versioned((*C.DLTensor)(unsafe.Pointer(view)), C.uint64_t(flags), o.p)
	return (*godlpack.DLManagedTensorVersioned)(unsafe.Pointer(m))
}

// ExportLegacy is ExportVersioned for a legacy DLManagedTensor.
func ExportLegacy(view *godlpack.DLTensor, o Owner) *godlpack.DLManagedTensor {
	m := C.gdl_export_legacy((*C.DLTensor)(unsafe.Pointer(view)), o.p)
	return (*godlpack.DLManagedTensor)(unsafe.Pointer(m))
}

// LiveOwners and LiveExports count owners and managed tensors made here and
// not yet released, process-wide: tests use them to prove exactly-once.
func LiveOwners() int64  { return int64(C.gdl_live_owners()) }
func LiveExports() int64 { return int64(C.gdl_live_exports()) }
