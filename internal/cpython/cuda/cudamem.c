/* Memory godlpack allocates through the CUDA driver (device, managed,
 * pinned host) and the byte copies it makes with it, as owners: the tensor
 * layer (tensor/copy.c) decides what to copy and wraps the result. Each
 * allocation holds a reference to its device's primary context until it is
 * freed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cuda.h"
#include "cudadrv.h"

/* --- blocks kept for reuse ---------------------------------------------------
 * Allocating through the driver is slow next to a copy: page-locking host
 * memory costs more than the bus saves, and 256 MiB device copies with a new
 * cuMemAlloc and cuMemFree each ran at 397 GB/s on an H200, where PyTorch's
 * caching allocator gave 1,843 GB/s (bench/gpu_bench.py). So freed blocks are
 * kept, up to KEEP_BYTES per kind, and handed out again for requests of at
 * least half their size (gdl_cuda_trim frees them). A kept device block holds
 * a reference to its primary context, so the driver cannot free it under us.
 * The pools' locks are taken on any thread, GIL or not. */
#define PINNED_MIN ((size_t)1 << 20) /* smaller host copies: the pageable path costs no more */
#define KEEP_BYTES ((size_t)1 << 30)
#define POOL_SLOTS 16
#define STAGE_BYTES ((size_t)8 << 20) /* host-to-device staging chunk (two in flight) */

typedef struct {
  void* ptr;
  size_t size;
  int32_t device_id; /* device blocks: where they live (dev is its handle) */
  CUdevice dev;
} kept_block;

typedef struct {
  pthread_mutex_t mu;
  kept_block slot[POOL_SLOTS];
  size_t bytes;
} block_pool;

/* Pinned host blocks (portable: any context may use them) and device blocks. */
static block_pool pinned_pool = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};
static block_pool device_pool = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};

/* Takes a kept block of at least n bytes (at most 2n, so big blocks are not
 * wasted on small copies) on device_id (-1: pinned host); 0 if none. */
static int pool_take(block_pool* p, size_t n, int32_t device_id, kept_block* out) {
  pthread_mutex_lock(&p->mu);
  int best = -1;
  for (int i = 0; i < POOL_SLOTS; i++) {
    kept_block* b = &p->slot[i];
    if (b->ptr && b->device_id == device_id && b->size >= n && b->size / 2 <= n &&
        (best < 0 || b->size < p->slot[best].size))
      best = i;
  }
  if (best >= 0) {
    *out = p->slot[best];
    p->bytes -= out->size;
    p->slot[best] = (kept_block){0};
  }
  pthread_mutex_unlock(&p->mu);
  return best >= 0;
}

/* Keeps b for reuse; 0 when the pool is full (the caller frees it). */
static int pool_keep(block_pool* p, kept_block b) {
  pthread_mutex_lock(&p->mu);
  int slot = -1;
  for (int i = 0; i < POOL_SLOTS && slot < 0 && p->bytes + b.size <= KEEP_BYTES; i++)
    if (p->slot[i].ptr == NULL) slot = i;
  if (slot >= 0) {
    p->slot[slot] = b;
    p->bytes += b.size;
  }
  pthread_mutex_unlock(&p->mu);
  return slot >= 0;
}

/* Empties p into kept (POOL_SLOTS entries). */
static void pool_drain(block_pool* p, kept_block* kept) {
  pthread_mutex_lock(&p->mu);
  memcpy(kept, p->slot, sizeof p->slot);
  memset(p->slot, 0, sizeof p->slot);
  p->bytes = 0;
  pthread_mutex_unlock(&p->mu);
}

typedef kept_block pinned_block;

/* A pinned block of at least n bytes, kept or new; the caller has entered a
 * context. */
static CUresult pinned_get(size_t n, pinned_block* out) {
  if (pool_take(&pinned_pool, n, -1, out)) return 0;
  *out = (pinned_block){NULL, n, -1, 0};
  return gdl_cu.MemHostAlloc(&out->ptr, n, CU_MEMHOSTALLOC_PORTABLE);
}

/* Back to the pool, or freed (in device_id's context) when it is full. */
static void pinned_put(pinned_block b, int32_t device_id) {
  b.device_id = -1;
  if (pool_keep(&pinned_pool, b)) return;
  CUdevice d;
  if (gdl_cu_enter(device_id, &d) == 0) {
    gdl_cu.MemFreeHost(b.ptr);
    gdl_cu_leave(d);
  }
}

/* Frees a device block and drops its context reference. */
static void device_free(kept_block b) {
  CUdevice d;
  if (gdl_cu_enter(b.device_id, &d) == 0) {
    gdl_cu.MemFree((CUdeviceptr)(uintptr_t)b.ptr);
    gdl_cu_leave(d);
  }
  gdl_cu.PrimaryCtxRelease(b.dev);
}

void gdl_cuda_trim(void) {
  kept_block kept[POOL_SLOTS];
  pool_drain(&pinned_pool, kept);
  CUdevice d;
  for (int i = 0; i < POOL_SLOTS; i++) {
    if (kept[i].ptr == NULL || gdl_cu_enter(0, &d) != 0) continue;
    gdl_cu.MemFreeHost(kept[i].ptr);
    gdl_cu_leave(d);
  }
  pool_drain(&device_pool, kept);
  for (int i = 0; i < POOL_SLOTS; i++)
    if (kept[i].ptr) device_free(kept[i]);
}

/* Memory allocated through the driver (GDL_MEM_*), holding a reference to
 * the primary context it lives in until it is freed. */

typedef struct {
  gdl_owner base;
  void* ptr;
  size_t size; /* bytes allocated */
  CUdevice dev;
  int32_t device_id;
  int kind;
} cuda_owner;

/* Device memory is kept for reuse once everything queued in its context
 * has run: consumers may still have kernels reading it on streams godlpack
 * does not know, so only a context-wide wait makes reuse safe (cuMemFree
 * waits just as long). */
static void release_cuda(gdl_owner* o) {
  cuda_owner* c = (cuda_owner*)o;
  CUdevice d;
  int kept = 0;
  if (gdl_cu_enter(c->device_id, &d) == 0) {
    if (c->kind == GDL_MEM_DEVICE && gdl_cu.CtxSynchronize() == 0)
      kept = pool_keep(&device_pool, (kept_block){c->ptr, c->size, c->device_id, c->dev});
    if (kept) {
    } else if (c->kind == GDL_MEM_HOST) {
      gdl_cu.MemFreeHost(c->ptr);
    } else {
      gdl_cu.MemFree((CUdeviceptr)(uintptr_t)c->ptr);
    }
    gdl_cu_leave(d);
  }
  if (!kept) gdl_cu.PrimaryCtxRelease(c->dev); /* a kept block keeps its reference */
  free(c);
}

/* n bytes (at least 1) of the given kind in dev's primary context, which the
 * caller has entered. */
static CUresult cuda_alloc(int kind, size_t n, CUdevice dev, int32_t device_id, cuda_owner** out) {
  cuda_owner* c = malloc(sizeof *c);
  if (c == NULL) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  n = n ? n : 1;
  kept_block b;
  void* p = NULL;
  if (kind == GDL_MEM_DEVICE && pool_take(&device_pool, n, device_id, &b)) { /* with its context reference */
    p = b.ptr;
    n = b.size;
  } else {
    CUdeviceptr d = 0;
    CUresult r = kind == GDL_MEM_DEVICE    ? gdl_cu.MemAlloc(&d, n)
                 : kind == GDL_MEM_MANAGED ? gdl_cu.MemAllocManaged(&d, n, CU_MEM_ATTACH_GLOBAL)
                                       : gdl_cu.MemHostAlloc(&p, n, 0);
    if (kind != GDL_MEM_HOST) p = (void*)(uintptr_t)d;
    CUcontext ctx;
    if (r == 0 && (r = gdl_cu.PrimaryCtxRetain(&ctx, dev)) != 0) {
      if (kind == GDL_MEM_HOST) gdl_cu.MemFreeHost(p);
      else gdl_cu.MemFree(d);
    }
    if (r != 0) {
      free(c);
      return r;
    }
  }
  gdl_owner_init(&c->base, release_cuda);
  c->ptr = p;
  c->size = n;
  c->dev = dev;
  c->device_id = device_id;
  c->kind = kind;
  *out = c;
  return 0;
}

/* A CPU tensor's memory in a pinned block, returned to the pool when the
 * last view of it dies. */
typedef struct {
  gdl_owner base;
  pinned_block block;
  int32_t device_id;
} pinned_owner;

static void release_pinned(gdl_owner* o) {
  pinned_owner* p = (pinned_owner*)o;
  pinned_put(p->block, p->device_id);
  free(p);
}

/* n bytes of src (device memory, ready on stream on) in a new pinned host
 * block, waited for; the caller has entered device_id's context. */
static CUresult pinned_from_device(CUdeviceptr src, size_t n, intptr_t on, int32_t device_id, gdl_owner** out,
                                   void** base) {
  pinned_owner* p = malloc(sizeof *p);
  if (p == NULL) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  CUresult r = pinned_get(n, &p->block);
  if (r != 0) {
    free(p);
    return r;
  }
  p->device_id = device_id;
  gdl_owner_init(&p->base, release_pinned);
  r = gdl_cu.MemcpyDtoHAsync(p->block.ptr, src, n, gdl_cu_stream(on));
  if (r == 0) r = gdl_cu.StreamSynchronize(gdl_cu_stream(on));
  *out = &p->base;
  *base = p->block.ptr;
  return r; /* on failure the caller drops the owner */
}

/* n bytes of pageable host memory copied to dst through two pinned staging
 * chunks: the CPU fills one while the bus drains the other. Done (waited
 * for) on return, so the source may change next. */
static CUresult staged_to_device(CUdeviceptr dst, const char* src, size_t n, int32_t device_id) {
  pinned_block stage[2] = {{NULL, 0}, {NULL, 0}};
  CUevent done[2] = {NULL, NULL};
  CUresult r = 0;
  for (int k = 0; k < 2 && r == 0; k++) {
    r = pinned_get(STAGE_BYTES, &stage[k]);
    if (r == 0) r = gdl_cu.EventCreate(&done[k], CU_EVENT_DISABLE_TIMING);
  }
  int used[2] = {0, 0};
  for (size_t off = 0, k = 0; r == 0 && off < n; off += STAGE_BYTES, k ^= 1) {
    size_t len = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
    if (used[k] && (r = gdl_cu.EventSynchronize(done[k])) != 0) break; /* its last copy has read it */
    gdl_par_memcpy(stage[k].ptr, src + off, len);
    r = gdl_cu.MemcpyHtoDAsync(dst + off, stage[k].ptr, len, gdl_cu_stream(1));
    if (r == 0) r = gdl_cu.EventRecord(done[k], gdl_cu_stream(1));
    used[k] = r == 0;
  }
  for (int k = 0; k < 2; k++) {
    CUresult w = used[k] ? gdl_cu.EventSynchronize(done[k]) : 0; /* before the block is reused */
    if (r == 0) r = w;
    if (done[k]) gdl_cu.EventDestroy(done[k]);
    if (stage[k].ptr == NULL) continue;
    if (w == 0) pinned_put(stage[k], device_id);
    else gdl_cu.MemFreeHost(stage[k].ptr); /* a copy may still read it: never reused */
  }
  return r;
}

/* A copy from the host uses the synchronous call: a pageable source is
 * staged and a pinned one read before it returns (the caller may free or
 * change it next), and the device write completes on the legacy stream. */
int gdl_cuda_span_copy(int32_t from, int32_t from_id, DLDevice to, const char* first, size_t n, intptr_t on,
                       gdl_owner** owner_out, void** base_out) {
  int32_t gpu = to.device_type == kDLCPU ? from_id : to.device_id;
  CUdevice dev;
  CUresult r = gdl_cu_enter(gpu, &dev);
  if (r != 0) return gdl_cu_fail("context setup", r);
  gdl_owner* owner = NULL;
  void* base = NULL;
  /* Large copies run without the GIL (nothing below touches Python). */
  PyThreadState* ts = n >= PINNED_MIN ? PyEval_SaveThread() : NULL;
  if (to.device_type == kDLCPU && n >= PINNED_MIN) {
    r = pinned_from_device((CUdeviceptr)first, n, on, gpu, &owner, &base);
  } else if (to.device_type == kDLCPU) {
    owner = gdl_owner_alloc(n, &base);
    r = owner == NULL ? 2 /* out of memory */ : n ? gdl_cu.MemcpyDtoHAsync(base, (CUdeviceptr)first, n, gdl_cu_stream(on)) : 0;
    if (r == 0 && n) r = gdl_cu.StreamSynchronize(gdl_cu_stream(on));
  } else {
    /* Managed memory read from the host side: the producer's work lands first. */
    if (from != kDLCUDA && on != 1) r = gdl_cu.StreamSynchronize(gdl_cu_stream(on));
    cuda_owner* c;
    if (r == 0 && (r = cuda_alloc(GDL_MEM_DEVICE, n, dev, to.device_id, &c)) == 0) {
      owner = &c->base;
      base = c->ptr;
      CUdeviceptr d = (CUdeviceptr)(uintptr_t)base;
      if (n == 0) {
      } else if (from == kDLCUDA) {
        r = gdl_cu.MemcpyDtoDAsync(d, (CUdeviceptr)first, n, gdl_cu_stream(on));
      } else if (from == kDLCPU && n >= PINNED_MIN) {
        r = staged_to_device(d, first, n, to.device_id);
      } else { /* small, or already page-locked (CUDAHost) or managed memory */
        r = gdl_cu.MemcpyHtoD(d, first, n);
      }
    }
  }
  gdl_cu_leave(dev);
  if (ts != NULL) PyEval_RestoreThread(ts);
  if (r != 0) {
    if (owner) gdl_owner_decref(owner);
    return gdl_cu_fail("copy", r);
  }
  *owner_out = owner;
  *base_out = base;
  return 0;
}

int gdl_cuda_alloc(int kind, size_t n, int32_t device_id, gdl_owner** owner, void** ptr) {
  if (gdl_cu_ready() != 0) return -1;
  CUdevice dev;
  CUresult r = gdl_cu_enter(device_id, &dev);
  if (r != 0) return gdl_cu_fail("context setup", r);
  cuda_owner* c;
  r = cuda_alloc(kind, n, dev, device_id, &c);
  gdl_cu_leave(dev);
  if (r != 0) return gdl_cu_fail("allocation", r);
  *owner = &c->base;
  *ptr = c->ptr;
  return 0;
}
