package producer

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/core"
)

// ErrClosed is returned when exporting from a Source after Close.
var ErrClosed = errors.New("producer: source is closed")

// ErrReadOnlyLegacy: legacy DLManagedTensor has no read-only flag.
var ErrReadOnlyLegacy = errors.New("producer: a read-only tensor cannot be exported as a legacy DLManagedTensor")

// ErrOutOfMemory: the C allocation failed (MemoryError in Python).
var ErrOutOfMemory = errors.New("producer: out of memory")

// ErrOutOfRange: a fill value does not fit the dtype (OverflowError in Python).
var ErrOutOfRange = errors.New("producer: value out of range for the dtype")

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
	owner  core.Owner
	view   *godlpack.DLTensor // C memory: DLTensor followed by shape and strides
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
	r.owner.Decref()
}

// newSource takes over the owner's initial reference (also on failure).
func newSource(t godlpack.Tensor, owner core.Owner) (*Source, error) {
	n := len(t.Shape)
	v := (*godlpack.DLTensor)(C.malloc(C.size_t(unsafe.Sizeof(godlpack.DLTensor{})) + C.size_t(16*n)))
	if v == nil {
		owner.Decref()
		return nil, ErrOutOfMemory
	}
	*v = godlpack.DLTensor{
		Data:       t.Data,
		Device:     t.Device.DLDevice(),
		NDim:       int32(n),
		DType:      godlpack.DLDataType{Code: t.DType.Code, Bits: t.DType.Bits, Lanes: t.DType.Lanes},
		ByteOffset: t.ByteOffset,
	}
	if n > 0 {
		dims := unsafe.Slice((*int64)(unsafe.Add(unsafe.Pointer(v), unsafe.Sizeof(*v))), 2*n)
		copy(dims, t.Shape)
		copy(dims[n:], t.StridesOrCompact())
		v.Shape = &dims[0]
		v.Strides = &dims[n]
	}
	s := &Source{t: t, ref: &sourceRef{owner: owner, view: v}}
	// Safety net: a Source dropped without Close still releases its reference.
	runtime.AddCleanup(s, func(r *sourceRef) { r.drop() }, s.ref)
	return s, nil
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
	m := core.ExportVersioned(r.view, flags, r.owner)
	if m == nil {
		return nil, ErrOutOfMemory
	}
	return m, nil
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
	m := core.ExportLegacy(r.view, r.owner)
	if m == nil {
		return nil, ErrOutOfMemory
	}
	return m, nil
}

// LiveOwners and LiveExports count owners and managed tensors not yet
// released, process-wide; tests use them to prove exactly-once deletion.
func LiveOwners() int64  { return core.LiveOwners() }
func LiveExports() int64 { return core.LiveExports() }

// goMemory keeps pinned Go memory alive until the last export is deleted.
type goMemory struct {
	pin     runtime.Pinner
	keep    any
	onFinal func()
}

func (g *goMemory) Release() {
	g.pin.Unpin()
	g.keep = nil
	if g.onFinal != nil {
		g.onFinal()
	}
}
