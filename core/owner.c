#include <stdlib.h>
#include <string.h>
#include "aligned.h"
#include "owner.h"
#include "shape.h"

static int64_t live_owners, live_exports;

int64_t gdl_live_owners(void) { return __atomic_load_n(&live_owners, __ATOMIC_RELAXED); }
int64_t gdl_live_exports(void) { return __atomic_load_n(&live_exports, __ATOMIC_RELAXED); }

void gdl_owner_init(gdl_owner* o, void (*release)(gdl_owner*)) {
  o->refs = 1;
  o->release = release;
  o->next = NULL;
  __atomic_add_fetch(&live_owners, 1, __ATOMIC_RELAXED);
}

void gdl_owner_incref(gdl_owner* o) { __atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED); }

/* A release that drops the last reference to another owner on the same
 * thread (a foreign deleter releasing an export of ours, as in a chain of
 * imports through NumPy) is queued and run by the outermost release: a chain
 * of any length is released in constant stack. */
/* initial-exec: a plain %fs-relative access, not a __tls_get_addr call per
 * release (the Go runtime in the same library already needs static TLS). */
static __thread gdl_owner* queued __attribute__((tls_model("initial-exec")));
static __thread int releasing __attribute__((tls_model("initial-exec")));

void gdl_owner_decref(gdl_owner* o) {
  if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  __atomic_sub_fetch(&live_owners, 1, __ATOMIC_RELAXED);
  if (releasing) {
    o->next = queued;
    queued = o;
    return;
  }
  releasing = 1;
  o->release(o);
  while (queued != NULL) {
    gdl_owner* n = queued;
    queued = n->next;
    n->release(n);
  }
  releasing = 0;
}

/* --- C memory --------------------------------------------------------- */

static void release_aligned(gdl_owner* o) { gdl_aligned_free(o); }
static void release_calloc(gdl_owner* o) { free(((void**)o)[-1]); }

static gdl_owner* owner_alloc(uint64_t nbytes, int zeroed, void** data) {
  /* The owner header takes the first GDL_ALIGN bytes so data stays aligned. */
  if (nbytes > UINT64_MAX - 2 * GDL_ALIGN) return NULL;
  uint64_t total = GDL_ALIGN + ((nbytes + GDL_ALIGN - 1) / GDL_ALIGN) * GDL_ALIGN;
  if (total > (uint64_t)SIZE_MAX - GDL_ALIGN) return NULL;
  gdl_owner* o;
  if (zeroed) {
    /* calloc of a large block maps fresh zero pages without touching them;
     * over-allocate to align, and remember where the block starts. */
    char* raw = calloc(1, (size_t)total + GDL_ALIGN);
    if (raw == NULL) return NULL;
    o = (gdl_owner*)(raw + (GDL_ALIGN - ((uintptr_t)raw % GDL_ALIGN)));
    ((void**)o)[-1] = raw; /* at least 16 bytes of slack before o */
    gdl_owner_init(o, release_calloc);
  } else {
    o = gdl_aligned_alloc(GDL_ALIGN, (size_t)total);
    if (o == NULL) return NULL;
    gdl_owner_init(o, release_aligned);
  }
  *data = (char*)o + GDL_ALIGN;
  return o;
}

gdl_owner* gdl_owner_alloc(uint64_t nbytes, void** data) { return owner_alloc(nbytes, 0, data); }
gdl_owner* gdl_owner_calloc(uint64_t nbytes, void** data) { return owner_alloc(nbytes, 1, data); }

/* --- a foreign managed tensor ------------------------------------------ */

typedef struct {
  gdl_owner base;
  void* managed;
  int versioned;
} foreign_owner;

void gdl_managed_free(void* managed, int versioned) {
  if (managed == NULL) return;
  if (versioned) {
    DLManagedTensorVersioned* m = managed;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor* m = managed;
    if (m->deleter) m->deleter(m);
  }
}

static void release_foreign(gdl_owner* o) {
  foreign_owner* f = (foreign_owner*)o;
  gdl_managed_free(f->managed, f->versioned);
  free(f);
}

gdl_owner* gdl_owner_foreign(void* managed, int versioned) {
  foreign_owner* f = malloc(sizeof *f);
  if (f == NULL) return NULL;
  gdl_owner_init(&f->base, release_foreign);
  f->managed = managed;
  f->versioned = versioned;
  return &f->base;
}

/* --- Go memory ---------------------------------------------------------- */

typedef struct {
  gdl_owner base;
  uintptr_t handle;
} go_owner;

extern void godlpackReleaseHandle(uintptr_t handle); /* core/owner.go */

static volatile int forked;
void gdl_owner_forked(void) { forked = 1; }

static void release_go(gdl_owner* o) {
  uintptr_t h = ((go_owner*)o)->handle;
  free(o);
  if (!forked) godlpackReleaseHandle(h); /* after fork() Go would hang: leak */
}

gdl_owner* gdl_owner_go(uintptr_t handle) {
  go_owner* g = malloc(sizeof *g);
  if (g == NULL) return NULL;
  gdl_owner_init(&g->base, release_go);
  g->handle = handle;
  return &g->base;
}

/* --- fresh managed tensors --------------------------------------------- */

void gdl_fill_dims(DLTensor* dst, const DLTensor* view, int64_t* dims) {
  int32_t n = view->ndim;
  *dst = *view;
  dst->shape = dims;
  dst->strides = dims + n;
  if (n > 0) memcpy(dims, view->shape, (size_t)n * sizeof(int64_t));
  if (n > 0 && view->strides != NULL) {
    memcpy(dims + n, view->strides, (size_t)n * sizeof(int64_t));
  } else {
    gdl_compact_strides(view->shape, n, dims + n);
  }
}

static void gdl_deleter_versioned(DLManagedTensorVersioned* self) {
  gdl_owner* o = self->manager_ctx;
  free(self);
  __atomic_sub_fetch(&live_exports, 1, __ATOMIC_RELAXED);
  gdl_owner_decref(o);
}

static void gdl_deleter_legacy(DLManagedTensor* self) {
  gdl_owner* o = self->manager_ctx;
  free(self);
  __atomic_sub_fetch(&live_exports, 1, __ATOMIC_RELAXED);
  gdl_owner_decref(o);
}

DLManagedTensorVersioned* gdl_export_versioned(const DLTensor* view, uint64_t flags,
                                               gdl_owner* owner) {
  int32_t n = view->ndim < 0 ? 0 : view->ndim;
  DLManagedTensorVersioned* m = malloc(sizeof *m + 2 * (size_t)n * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = owner;
  m->deleter = gdl_deleter_versioned;
  m->flags = flags;
  gdl_fill_dims(&m->dl_tensor, view, (int64_t*)(m + 1));
  gdl_owner_incref(owner);
  __atomic_add_fetch(&live_exports, 1, __ATOMIC_RELAXED);
  return m;
}

DLManagedTensor* gdl_export_legacy(const DLTensor* view, gdl_owner* owner) {
  int32_t n = view->ndim < 0 ? 0 : view->ndim;
  DLManagedTensor* m = malloc(sizeof *m + 2 * (size_t)n * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->manager_ctx = owner;
  m->deleter = gdl_deleter_legacy;
  gdl_fill_dims(&m->dl_tensor, view, (int64_t*)(m + 1));
  gdl_owner_incref(owner);
  __atomic_add_fetch(&live_exports, 1, __ATOMIC_RELAXED);
  return m;
}
