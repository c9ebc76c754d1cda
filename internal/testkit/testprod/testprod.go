// Package testprod is a test-only DLPack producer written in C. It hands out
// DLManagedTensorVersioned and DLManagedTensor structs in C memory whose every
// field the test may set to anything, with a counting deleter, so consumer
// and capsule tests can feed hostile tensors and prove the deleter runs
// exactly once. It is the one counting producer of the Go tests.
//
// cgo cannot be used from _test.go files, which is why this lives here.
package testprod

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "godlpack/dlpack.h"

static int64_t tp_total_calls;

// The deleters count into the int64 cell manager_ctx points at (when not
// NULL) and into a process-wide total. They never free anything: the test
// frees the struct afterwards, so it can still read the count.
static void tp_deleter_versioned(DLManagedTensorVersioned* self) {
  if (self->manager_ctx != NULL) __atomic_add_fetch((int64_t*)self->manager_ctx, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&tp_total_calls, 1, __ATOMIC_SEQ_CST);
}

static void tp_deleter_legacy(DLManagedTensor* self) {
  if (self->manager_ctx != NULL) __atomic_add_fetch((int64_t*)self->manager_ctx, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&tp_total_calls, 1, __ATOMIC_SEQ_CST);
}

static void* tp_deleter_versioned_ptr(void) { return (void*)tp_deleter_versioned; }
static void* tp_deleter_legacy_ptr(void) { return (void*)tp_deleter_legacy; }
static int64_t tp_total(void) { return __atomic_load_n(&tp_total_calls, __ATOMIC_SEQ_CST); }
static int64_t tp_load(int64_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

// Two pages: the first readable and writable, the second PROT_NONE. Returns
// the start of the mapping, or NULL.
static void* tp_guarded_pages(size_t* page) {
  long ps = sysconf(_SC_PAGESIZE);
  if (ps <= 0) return NULL;
  void* p = mmap(NULL, 2 * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (mprotect((char*)p + ps, (size_t)ps, PROT_NONE) != 0) {
    munmap(p, 2 * (size_t)ps);
    return NULL;
  }
  *page = (size_t)ps;
  return p;
}

static void tp_unmap(void* p, size_t page) { munmap(p, 2 * page); }

static void tp_set_ptr(void** field, uintptr_t v) { *field = (void*)v; }
*/
import "C"

import (
	"unsafe"

	"github.com/godlpack/godlpack"
)

// DeleterVersioned and DeleterLegacy are the counting C deleters.
func DeleterVersioned() unsafe.Pointer { return C.tp_deleter_versioned_ptr() }
func DeleterLegacy() unsafe.Pointer    { return C.tp_deleter_legacy_ptr() }

// TotalCalls counts every call of either counting deleter in this process.
func TotalCalls() int64 { return int64(C.tp_total()) }

// Counter is an int64 cell in C memory the counting deleters increment when
// it is a managed tensor's manager_ctx.
type Counter struct{ p *C.int64_t }

// NewCounter allocates a zeroed counter.
func NewCounter() Counter { return Counter{(*C.int64_t)(C.calloc(1, 8))} }

// Ptr is the value to store in manager_ctx.
func (c Counter) Ptr() unsafe.Pointer { return unsafe.Pointer(c.p) }

// Calls reads the counter.
func (c Counter) Calls() int64 { return int64(C.tp_load(c.p)) }

// Free releases the counter.
func (c Counter) Free() { C.free(unsafe.Pointer(c.p)) }

// Versioned is a hand-made DLManagedTensorVersioned in C memory.
type Versioned struct {
	M       *godlpack.DLManagedTensorVersioned
	counter Counter
	free    func()
}

// NewVersioned allocates a zeroed DLManagedTensorVersioned with version 1.3,
// the counting deleter and a fresh counter as manager_ctx. Every other field
// is zero: the test fills in what it needs.
func NewVersioned() *Versioned {
	p := C.calloc(1, C.size_t(unsafe.Sizeof(godlpack.DLManagedTensorVersioned{})))
	v := &Versioned{M: (*godlpack.DLManagedTensorVersioned)(p), counter: NewCounter()}
	v.free = func() { C.free(p) }
	v.M.Version = godlpack.DLPackVersion{Major: 1, Minor: 3}
	v.M.ManagerCtx = v.counter.Ptr()
	v.M.Deleter = DeleterVersioned()
	return v
}

// NewGuardedVersioned is NewVersioned for a struct of which only the fields
// every major version shares (version, manager_ctx, deleter: the first 24
// bytes) are readable; reading flags or dl_tensor faults. The version is set
// to major.minor.
func NewGuardedVersioned(major, minor uint32) *Versioned {
	var page C.size_t
	base := C.tp_guarded_pages(&page)
	if base == nil {
		panic("testprod: mmap failed")
	}
	const stable = 24 // offsetof(DLManagedTensorVersioned, flags)
	p := unsafe.Add(base, int(page)-stable)
	v := &Versioned{M: (*godlpack.DLManagedTensorVersioned)(p), counter: NewCounter()}
	v.free = func() { C.tp_unmap(base, page) }
	v.M.Version = godlpack.DLPackVersion{Major: major, Minor: minor}
	v.M.ManagerCtx = v.counter.Ptr()
	v.M.Deleter = DeleterVersioned()
	return v
}

// Calls is how many times the deleter ran on this tensor.
func (v *Versioned) Calls() int64 { return v.counter.Calls() }

// Free releases the C memory (after the deleter ran, or when it never will).
func (v *Versioned) Free() { v.free(); v.counter.Free() }

// Legacy is a hand-made DLManagedTensor in C memory.
type Legacy struct {
	M       *godlpack.DLManagedTensor
	counter Counter
}

// NewLegacy allocates a zeroed DLManagedTensor with the counting deleter and
// a fresh counter as manager_ctx.
func NewLegacy() *Legacy {
	p := C.calloc(1, C.size_t(unsafe.Sizeof(godlpack.DLManagedTensor{})))
	l := &Legacy{M: (*godlpack.DLManagedTensor)(p), counter: NewCounter()}
	l.M.ManagerCtx = l.counter.Ptr()
	l.M.Deleter = DeleterLegacy()
	return l
}

// Calls is how many times the deleter ran on this tensor.
func (l *Legacy) Calls() int64 { return l.counter.Calls() }

// Free releases the C memory.
func (l *Legacy) Free() { C.free(unsafe.Pointer(l.M)); l.counter.Free() }

// Int64s copies vals into a new C array (at least one slot, so the pointer
// is never NULL). Free it with Free.
func Int64s(vals ...int64) *int64 {
	n := len(vals)
	if n == 0 {
		n = 1
	}
	p := (*int64)(C.calloc(C.size_t(n), 8))
	copy(unsafe.Slice(p, n), vals)
	return p
}

// Bytes allocates n zeroed bytes of C memory (at least one). Free it with Free.
func Bytes(n int) unsafe.Pointer {
	if n < 1 {
		n = 1
	}
	return C.calloc(C.size_t(n), 1)
}

// Free releases C memory from Int64s or Bytes.
func Free[T any](p *T) { C.free(unsafe.Pointer(p)) }

// FreePtr releases C memory from Bytes.
func FreePtr(p unsafe.Pointer) { C.free(p) }

// Unreadable is a mapping whose every byte faults when read: pointer fields
// a consumer must not follow can point here, so following them crashes the
// test instead of passing silently.
type Unreadable struct {
	P    unsafe.Pointer
	base unsafe.Pointer
	page C.size_t
}

// NewUnreadable maps an unreadable page.
func NewUnreadable() *Unreadable {
	var page C.size_t
	base := C.tp_guarded_pages(&page)
	if base == nil {
		panic("testprod: mmap failed")
	}
	return &Unreadable{P: unsafe.Add(base, int(page)), base: base, page: page}
}

// Free unmaps the page.
func (u *Unreadable) Free() { C.tp_unmap(u.base, u.page) }

// SetAddr stores an arbitrary address in a pointer field of a struct in C
// memory (such as &m.DLTensor.Data), from C, so that a value Go must never
// hold as a pointer (below 4096, e.g. Rust's dangling 0x4) never passes
// through a Go pointer variable here.
func SetAddr(field *unsafe.Pointer, addr uintptr) {
	C.tp_set_ptr(field, C.uintptr_t(addr))
}

// SetInt64sAddr is SetAddr for a shape or strides field.
func SetInt64sAddr(field **int64, addr uintptr) {
	C.tp_set_ptr((*unsafe.Pointer)(unsafe.Pointer(field)), C.uintptr_t(addr))
}

// Guarded is n bytes of zeroed C memory that end exactly where an unreadable
// page begins, so reading one byte past the end faults.
type Guarded struct {
	P    unsafe.Pointer
	N    int
	base unsafe.Pointer
	page C.size_t
}

// NewGuarded maps n bytes (at most one page) followed by an unreadable page.
func NewGuarded(n int) *Guarded {
	var page C.size_t
	base := C.tp_guarded_pages(&page)
	if base == nil {
		panic("testprod: mmap failed")
	}
	if n < 0 || n > int(page) {
		C.tp_unmap(base, page)
		panic("testprod: guarded size out of range")
	}
	return &Guarded{P: unsafe.Add(base, int(page)-n), N: n, base: base, page: page}
}

// Bytes views the memory.
func (g *Guarded) Bytes() []byte { return unsafe.Slice((*byte)(g.P), g.N) }

// Free unmaps it.
func (g *Guarded) Free() { C.tp_unmap(g.base, g.page) }
