/* Reference-counted owners and fresh managed tensors: the C core every export
 * (from Go memory, C memory or a re-export of an imported tensor) goes through.
 * Nothing here touches Python or Go, so deleters are safe on any thread. */
#ifndef GODLPACK_OWNER_H_
#define GODLPACK_OWNER_H_

#include <stdint.h>
#include "godlpack/dlpack.h"

typedef struct gdl_owner gdl_owner;

/* An owner keeps the memory behind one or more views alive. release runs once,
 * on whatever thread drops the last reference, and must free the owner; one
 * that becomes due during another release on the same thread runs right
 * after it, before the outermost gdl_owner_decref returns. */
struct gdl_owner {
  int64_t refs; /* accessed with __atomic builtins only */
  void (*release)(gdl_owner* self);
  gdl_owner* next; /* gdl_owner_decref's queue of nested releases */
};

void gdl_owner_init(gdl_owner* o, void (*release)(gdl_owner*));
void gdl_owner_incref(gdl_owner* o);
void gdl_owner_decref(gdl_owner* o);

/* Calls the deleter of a managed tensor of either kind, if it has one. */
void gdl_managed_free(void* managed, int versioned);

/* Owner of a block of C memory aligned to GDL_ALIGN bytes; data follows.
 * NULL when out of memory. */
#define GDL_ALIGN 64
gdl_owner* gdl_owner_alloc(uint64_t nbytes, void** data);

/* gdl_owner_alloc of zero bytes: large blocks come lazily zeroed from the
 * kernel (calloc), so memory is committed only as pages are touched. */
gdl_owner* gdl_owner_calloc(uint64_t nbytes, void** data);

/* Owner that holds a foreign managed tensor and calls its deleter on release. */
gdl_owner* gdl_owner_foreign(void* managed, int versioned);

/* Owner whose release hands a cgo.Handle back to Go (core/owner.go). */
gdl_owner* gdl_owner_go(uintptr_t handle);

/* Marks the process as a fork() child: Go cannot be called any more, so
 * Go-memory owners are leaked instead of released. */
void gdl_owner_forked(void);

/* Copies view to dst with shape and strides in dims (2*ndim slots), filling
 * in compact row-major strides when the view has none (pre-1.2 producers). */
void gdl_fill_dims(DLTensor* dst, const DLTensor* view, int64_t* dims);

/* Fresh managed tensors describing view; each holds one new reference to
 * owner, which its deleter drops. shape/strides are copied (strides are always
 * filled in, as DLPack 1.2 requires). Return NULL only when out of memory. */
DLManagedTensorVersioned* gdl_export_versioned(const DLTensor* view, uint64_t flags,
                                               gdl_owner* owner);
DLManagedTensor* gdl_export_legacy(const DLTensor* view, gdl_owner* owner);

/* Counters for tests: how many owners and managed tensors are alive. */
int64_t gdl_live_owners(void);
int64_t gdl_live_exports(void);

#endif
