package producer

/*
#include <stdlib.h>
#include "owner.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// ErrClosed is returned when exporting from a Source after Close.
var ErrClosed = errors.New("producer: source is closed")

// ErrReadOnlyLegacy: legacy DLManagedTensor has no read-only flag.
var ErrReadOnlyLegacy = errors.New("producer: a read-only tensor cannot be exported as a legacy DLManagedTensor")

var errOOM = errors.New("producer: out of memory")

// Source is memory plus a view of it that can be exported any number of
// times, from any goroutine. Each export holds its own reference to the
// memory, so the memory outlives Close until the last deleter has run.
type Source struct {
	t   godlpack.Tensor
	ref *sourceRef
}

// sourceRef is the Source's own reference and its C copy of the view, kept
// apart from Source so a cleanup can drop them without keeping Source alive.
type sourceRef struct {
	mu     sync.RWMutex
	owner  *C.gdl_owner
	view   *C.DLTensor // C memory: DLTensor followed by shape and strides
	closed bool
}

func (r *sourceRef) drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	C.free(unsafe.Pointer(r.view))
	r.view = nil
	C.gdl_owner_decref(r.owner)
}

// newSource takes over the owner's initial reference.
func newSource(t godlpack.Tensor, owner *C.gdl_owner) *Source {
	n := len(t.Shape)
	v := (*C.DLTensor)(C.malloc(C.size_t(unsafe.Sizeof(C.DLTensor{})) + C.size_t(16*n)))
	*v = C.DLTensor{
		data:        t.Data,
		device:      C.DLDevice{device_type: C.DLDeviceType(t.Device.Type), device_id: C.int32_t(t.Device.ID)},
		ndim:        C.int32_t(n),
		dtype:       C.DLDataType{code: C.uint8_t(t.DType.Code), bits: C.uint8_t(t.DType.Bits), lanes: C.uint16_t(t.DType.Lanes)},
		byte_offset: C.uint64_t(t.ByteOffset),
	}
	if n > 0 {
		dims := unsafe.Slice((*C.int64_t)(unsafe.Add(unsafe.Pointer(v), unsafe.Sizeof(*v))), 2*n)
		st := t.StridesOrCompact()
		for i := 0; i < n; i++ {
			dims[i] = C.int64_t(t.Shape[i])
			dims[n+i] = C.int64_t(st[i])
		}
		v.shape = &dims[0]
		v.strides = &dims[n]
	}
	s := &Source{t: t, ref: &sourceRef{owner: owner, view: v}}
	// Safety net: a Source dropped without Close still releases its reference.
	runtime.AddCleanup(s, func(r *sourceRef) { r.drop() }, s.ref)
	return s
}

// Tensor describes the exported view. Do not modify it.
func (s *Source) Tensor() *godlpack.Tensor { return &s.t }

// Close drops the Source's own reference. Exports already made stay valid.
func (s *Source) Close() { s.ref.drop() }

// ExportVersioned makes a fresh DLManagedTensorVersioned (DLPack 1.x). The
// READ_ONLY flag is added for read-only sources; extra flags are OR-ed in.
func (s *Source) ExportVersioned(extraFlags uint64) (*godlpack.DLManagedTensorVersioned, error) {
	flags := extraFlags
	if s.t.ReadOnly {
		flags |= godlpack.FlagReadOnly
	}
	r := s.ref
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, ErrClosed
	}
	m := C.gdl_export_versioned(r.view, C.uint64_t(flags), r.owner)
	if m == nil {
		return nil, errOOM
	}
	return (*godlpack.DLManagedTensorVersioned)(unsafe.Pointer(m)), nil
}

// ExportLegacy makes a fresh legacy DLManagedTensor (DLPack 0.x). Legacy
// tensors cannot say "read-only", so read-only sources are refused.
func (s *Source) ExportLegacy() (*godlpack.DLManagedTensor, error) {
	if s.t.ReadOnly {
		return nil, ErrReadOnlyLegacy
	}
	r := s.ref
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil, ErrClosed
	}
	m := C.gdl_export_legacy(r.view, r.owner)
	if m == nil {
		return nil, errOOM
	}
	return (*godlpack.DLManagedTensor)(unsafe.Pointer(m)), nil
}

// LiveOwners and LiveExports count owners and managed tensors not yet
// released, process-wide; tests use them to prove exactly-once deletion.
func LiveOwners() int64  { return int64(C.gdl_live_owners()) }
func LiveExports() int64 { return int64(C.gdl_live_exports()) }

// goMemory keeps pinned Go memory alive until the last export is deleted.
type goMemory struct {
	pin     runtime.Pinner
	keep    any
	onFinal func()
}

func (g *goMemory) release() {
	g.pin.Unpin()
	g.keep = nil
	if g.onFinal != nil {
		g.onFinal()
	}
}

func goOwner(g *goMemory) *C.gdl_owner {
	return C.gdl_owner_go(C.uintptr_t(cgo.NewHandle(g)))
}
