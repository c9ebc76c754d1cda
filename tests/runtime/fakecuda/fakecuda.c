/* A stand-in CUDA driver (libcuda) for tests on machines without a GPU.
 *
 * It implements the cu* entry points godlpack's internal/cpython/cuda/ loads, with host
 * memory acting as device memory (allocations are malloc), and it is as
 * asynchronous as the hardware allows: device work is queued on its stream
 * and done only when something waits for it (the latest schedule a GPU may
 * pick), so a missing event or synchronisation shows as stale data.
 *  - Streams: the legacy default stream (handle 0 or 1), the per-thread
 *    default stream (2, modelled as one blocking stream), and streams made by
 *    cuStreamCreate, blocking or CU_STREAM_NON_BLOCKING. Work on the legacy
 *    stream waits for earlier work on every blocking stream and the other way
 *    round; non-blocking streams wait for nothing they were not told to.
 *  - Events capture the work queued on their stream before the record; a
 *    stream wait orders later work on the waiting stream after it.
 *  - Copies follow the driver's documented host behaviour: device-to-host
 *    returns when done (it waits for the legacy stream's dependencies only);
 *    host-to-device from pageable memory returns once the source is staged,
 *    the device write happening later; from pinned memory (cuMemHostAlloc)
 *    the async form reads the source when it runs; device-to-device returns
 *    at once. cuMemFree waits for all queued work, as the real one does.
 * godlpack loads it when GODLPACK_LIBCUDA names it. Tests queue other
 * libraries' kernels with fakecuda_write_on/fakecuda_read_on.
 *
 * Every call is appended to a text log, one line each ("cuEventRecord ev=3
 * stream=5"), and counted. Misuse a real driver would reject or that would
 * crash on a GPU is counted as a violation and logged as a "VIOLATION ..."
 * line: memory calls without a current context, pushing a context that is
 * not retained, device pointers outside every live allocation (the copy is
 * then not done), unknown events, frees of unknown pointers.
 *
 * Tests read the state through the fakecuda_* functions (ctypes), loading
 * the library by the same path so that they see the same instance. */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUstream;
typedef struct fake_event* CUevent;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_INITIALIZED = 3, INVALID_DEVICE = 101,
       INVALID_CONTEXT = 201, INVALID_HANDLE = 400 };
enum { NDEV = 4, STACK = 16 };
enum { KIND_DEVICE, KIND_MANAGED, KIND_HOST, KIND_REGISTERED };
static const char* kind_names[] = {"device", "managed", "host", "registered"};

struct fake_stream;

struct fake_event {
  int id;
  intptr_t stream;          /* the handle last recorded on, -1 never */
  struct fake_stream* on;   /* that stream */
  long seq;                 /* the record's place in it */
};

/* Queued device work. A copy's source is read when it runs unless it was
 * staged (snap) when queued; a wait orders it after (wait_on, wait_seq). */
enum { OP_COPY, OP_MARK, OP_WAIT };
struct op {
  long seq;
  int kind, running;
  char* dst;
  const char* src;
  char* snap;
  size_t n;
  struct fake_stream* wait_on;
  long wait_seq;
};

struct fake_stream {
  intptr_t handle;
  int non_blocking, live;
  struct op** ops; /* queued, oldest first, from head on */
  size_t head, nops, cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int devices = 2;
static int retained[NDEV];
static char contexts[NDEV]; /* the primary contexts' handles are &contexts[dev] */
static __thread CUcontext stack[STACK];
static __thread int depth;

static struct alloc {
  char* p;
  size_t n;
  int kind;
} * allocs;
static size_t nallocs, capallocs;
static int live_events, next_event = 1;
static long violations;

static char* logbuf;
static size_t loglen, logcap;
#define LOG_MAX ((size_t)64 << 20)

static struct counter {
  const char* name;
  long n;
} counters[64];

static struct {
  char name[64];
  int skip;  /* calls to let through first */
  CUresult r;
} failing;

static void logf_locked(const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if ((size_t)k > sizeof line - 2) k = sizeof line - 2;
  line[k++] = '\n';
  if (loglen + k + 1 > LOG_MAX) return;
  if (loglen + k + 1 > logcap) {
    size_t cap = logcap ? logcap * 2 : 1 << 16;
    while (cap < loglen + k + 1) cap *= 2;
    char* b = realloc(logbuf, cap);
    if (b == NULL) return;
    logbuf = b;
    logcap = cap;
  }
  memcpy(logbuf + loglen, line, k);
  loglen += k;
  logbuf[loglen] = 0;
}

#define violation(...) (violations++, logf_locked("VIOLATION " __VA_ARGS__))

/* Counts the call and says whether an injected failure applies to it. */
static CUresult enter_call(const char* name) {
  size_t i = 0;
  for (; i < sizeof counters / sizeof counters[0] && counters[i].name; i++)
    if (strcmp(counters[i].name, name) == 0) break;
  if (i < sizeof counters / sizeof counters[0]) {
    counters[i].name = name;
    counters[i].n++;
  }
  if (failing.name[0] && strcmp(failing.name, name) == 0) {
    if (failing.skip > 0) {
      failing.skip--;
    } else {
      CUresult r = failing.r;
      failing.name[0] = 0;
      logf_locked("FAIL %s -> %d", name, r);
      return r;
    }
  }
  return initialized || strcmp(name, "cuInit") == 0 || strcmp(name, "cuGetErrorString") == 0 ? OK
                                                                                               : NOT_INITIALIZED;
}

#define BEGIN(name)               \
  pthread_mutex_lock(&mu);        \
  CUresult r_ = enter_call(name); \
  if (r_ != OK) {                 \
    pthread_mutex_unlock(&mu);    \
    return r_;                    \
  }
#define END(r)               \
  do {                       \
    CUresult e_ = (r);       \
    pthread_mutex_unlock(&mu); \
    return e_;               \
  } while (0)

static int need_context(const char* what) {
  if (depth > 0) return 1;
  violation("%s without a current context", what);
  return 0;
}

static struct alloc* find_alloc(const char* p, size_t n) {
  for (size_t i = 0; i < nallocs; i++) {
    struct alloc* a = &allocs[i];
    if (p >= a->p && p <= a->p + a->n && n <= (size_t)(a->p + a->n - p)) return a;
  }
  return NULL;
}

static int add_alloc(char* p, size_t n, int kind) {
  if (nallocs == capallocs) {
    size_t cap = capallocs ? capallocs * 2 : 64;
    struct alloc* a = realloc(allocs, cap * sizeof *a);
    if (a == NULL) return 0;
    allocs = a;
    capallocs = cap;
  }
  allocs[nallocs++] = (struct alloc){p, n, kind};
  return 1;
}

static int remove_alloc(const char* p, int kind) {
  for (size_t i = 0; i < nallocs; i++) {
    if (allocs[i].p == p && allocs[i].kind == kind) {
      allocs[i] = allocs[--nallocs];
      return 1;
    }
  }
  return 0;
}

/* A device-side range of a copy must lie inside one live allocation. */
static int device_range_ok(const char* what, CUdeviceptr p, size_t n) {
  if (find_alloc((const char*)(uintptr_t)p, n) != NULL) return 1;
  violation("%s: device range [0x%llx, +%zu) is outside every allocation", what, p, n);
  return 0;
}


/* --- streams and queued work ---------------------------------------------- */

#define CU_STREAM_NON_BLOCKING 0x1
enum { MAX_STREAMS = 256 };
static struct fake_stream legacy = {1, 0, 1, NULL, 0, 0, 0}, per_thread = {2, 0, 1, NULL, 0, 0, 0};
static struct fake_stream* made[MAX_STREAMS];
static int nmade;
static long seq;

static struct fake_stream* find_stream(CUstream h) {
  intptr_t v = (intptr_t)h;
  if (v == 0 || v == 1) return &legacy;
  if (v == 2) return &per_thread;
  for (int i = 0; i < nmade; i++)
    if (made[i]->live && made[i]->handle == v) return made[i];
  return NULL;
}

/* The stream of handle h, or NULL after logging a violation. */
static struct fake_stream* stream_of(const char* what, CUstream h) {
  struct fake_stream* s = find_stream(h);
  if (s == NULL) violation("%s on stream %ld, which no cuStreamCreate made (or destroyed)", what, (long)(intptr_t)h);
  return s;
}

static int blocking(const struct fake_stream* s) { return s != &legacy && !s->non_blocking; }

static void run_upto(struct fake_stream* s, long upto);

static void perform(struct op* o) {
  if (o->kind == OP_COPY) memmove(o->dst, o->snap ? o->snap : o->src, o->n);
  free(o->snap);
  free(o);
}

/* Runs s's oldest queued op after everything it depends on. */
static void run_head(struct fake_stream* s) {
  struct op* o = s->ops[s->head];
  o->running = 1;
  if (s == &legacy) {
    for (int i = 0; i < nmade; i++)
      if (made[i]->live && blocking(made[i])) run_upto(made[i], o->seq);
    run_upto(&per_thread, o->seq);
  } else if (blocking(s)) {
    run_upto(&legacy, o->seq);
  }
  if (o->kind == OP_WAIT && o->wait_on) run_upto(o->wait_on, o->wait_seq);
  s->head++;
  if (s->head == s->nops) s->head = s->nops = 0;
  perform(o);
}

/* Runs s's queued work up to global position upto (dependencies first).
 * Every dependency lies earlier in the global order, so this ends. */
static void run_upto(struct fake_stream* s, long upto) {
  while (s->head < s->nops && s->ops[s->head]->seq <= upto && !s->ops[s->head]->running) run_head(s);
}

static void run_all(void) {
  run_upto(&legacy, LONG_MAX);
  run_upto(&per_thread, LONG_MAX);
  for (int i = 0; i < nmade; i++) run_upto(made[i], LONG_MAX);
}

static long pending_upto(const struct fake_stream* s, long upto) {
  long n = 0;
  for (size_t i = s->head; i < s->nops; i++) n += s->ops[i]->seq <= upto;
  return n;
}

/* Queues an op on s; its global position. staged: copy the source now. */
static long enqueue(struct fake_stream* s, int kind, void* dst, const void* src, size_t n, int staged) {
  struct op* o = calloc(1, sizeof *o);
  if (o == NULL) abort();
  o->seq = ++seq;
  o->kind = kind;
  o->dst = dst;
  o->src = src;
  o->n = n;
  if (staged && n) {
    o->snap = malloc(n);
    if (o->snap == NULL) abort();
    memcpy(o->snap, src, n);
  }
  if (s->nops == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    struct op** ops = realloc(s->ops, cap * sizeof *ops);
    if (ops == NULL) abort();
    s->ops = ops;
    s->cap = cap;
  }
  s->ops[s->nops++] = o;
  return o->seq;
}

static int is_pinned(const void* p, size_t n) {
  struct alloc* a = find_alloc(p, n);
  return a != NULL && a->kind == KIND_HOST;
}

/* --- the driver API ------------------------------------------------------- */

CUresult cuInit(unsigned flags) {
  BEGIN("cuInit");
  const char* env = getenv("FAKECUDA_INIT_RESULT");
  CUresult r = env && *env ? atoi(env) : OK;
  const char* nd = getenv("FAKECUDA_DEVICES");
  if (nd && *nd) devices = atoi(nd) < 0 ? 0 : atoi(nd) > NDEV ? NDEV : atoi(nd);
  logf_locked("cuInit flags=%u -> %d", flags, r);
  if (r == OK) initialized = 1;
  END(r);
}

CUresult cuGetErrorString(CUresult e, const char** s) {
  static char msgs[8][48];
  static int next;
  BEGIN("cuGetErrorString");
  char* m = msgs[next++ % 8];
  snprintf(m, sizeof msgs[0], "fakecuda error %d", e);
  if (s) *s = m;
  END(OK);
}

CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  BEGIN("cuDeviceGet");
  logf_locked("cuDeviceGet ordinal=%d", ordinal);
  if (ordinal < 0 || ordinal >= devices) END(INVALID_DEVICE);
  *d = ordinal;
  END(OK);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  BEGIN("cuDevicePrimaryCtxRetain");
  logf_locked("cuDevicePrimaryCtxRetain dev=%d", d);
  if (d < 0 || d >= devices) END(INVALID_DEVICE);
  retained[d]++;
  *c = &contexts[d];
  END(OK);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  BEGIN("cuDevicePrimaryCtxRelease_v2");
  logf_locked("cuDevicePrimaryCtxRelease_v2 dev=%d", d);
  if (d < 0 || d >= devices) END(INVALID_DEVICE);
  if (retained[d] == 0) {
    violation("cuDevicePrimaryCtxRelease_v2 of device %d, not retained", d);
    END(INVALID_CONTEXT);
  }
  retained[d]--;
  END(OK);
}

CUresult cuCtxPushCurrent_v2(CUcontext c) {
  BEGIN("cuCtxPushCurrent_v2");
  intptr_t d = (char*)c - contexts;
  logf_locked("cuCtxPushCurrent_v2 dev=%ld", (long)d);
  if (d < 0 || d >= NDEV) {
    violation("cuCtxPushCurrent_v2 of an unknown context %p", c);
    END(INVALID_CONTEXT);
  }
  if (retained[d] == 0) violation("cuCtxPushCurrent_v2 of device %ld's primary context, not retained", (long)d);
  if (depth == STACK) END(INVALID_VALUE);
  stack[depth++] = c;
  END(OK);
}

CUresult cuCtxPopCurrent_v2(CUcontext* c) {
  BEGIN("cuCtxPopCurrent_v2");
  logf_locked("cuCtxPopCurrent_v2");
  if (depth == 0) {
    violation("cuCtxPopCurrent_v2 with no current context");
    END(INVALID_CONTEXT);
  }
  CUcontext top = stack[--depth];
  if (c) *c = top;
  END(OK);
}

CUresult cuEventCreate(CUevent* e, unsigned flags) {
  BEGIN("cuEventCreate");
  need_context("cuEventCreate");
  struct fake_event* ev = malloc(sizeof *ev);
  if (ev == NULL) END(OUT_OF_MEMORY);
  ev->id = next_event++;
  ev->stream = -1;
  ev->on = NULL;
  ev->seq = 0;
  live_events++;
  *e = ev;
  logf_locked("cuEventCreate ev=%d flags=%u", ev->id, flags);
  END(OK);
}

CUresult cuEventRecord(CUevent e, CUstream s) {
  BEGIN("cuEventRecord");
  need_context("cuEventRecord");
  if (e == NULL) END(INVALID_HANDLE);
  logf_locked("cuEventRecord ev=%d stream=%ld", e->id, (long)(intptr_t)s);
  struct fake_stream* st = stream_of("cuEventRecord", s);
  if (st == NULL) END(INVALID_HANDLE);
  e->stream = (intptr_t)s;
  e->on = st;
  e->seq = enqueue(st, OP_MARK, NULL, NULL, 0, 0);
  END(OK);
}

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  BEGIN("cuStreamWaitEvent");
  need_context("cuStreamWaitEvent");
  if (e == NULL) END(INVALID_HANDLE);
  if (e->stream == -1) violation("cuStreamWaitEvent on event %d, never recorded", e->id);
  logf_locked("cuStreamWaitEvent stream=%ld ev=%d flags=%u", (long)(intptr_t)s, e->id, flags);
  struct fake_stream* st = stream_of("cuStreamWaitEvent", s);
  if (st == NULL) END(INVALID_HANDLE);
  long at = enqueue(st, OP_WAIT, NULL, NULL, 0, 0);
  struct op* w = st->ops[st->nops - 1];
  (void)at;
  w->wait_on = e->on;
  w->wait_seq = e->seq;
  END(OK);
}

CUresult cuEventDestroy_v2(CUevent e) {
  BEGIN("cuEventDestroy_v2");
  if (e == NULL) END(INVALID_HANDLE);
  logf_locked("cuEventDestroy_v2 ev=%d", e->id);
  live_events--;
  free(e);
  END(OK);
}

CUresult cuEventSynchronize(CUevent e) {
  BEGIN("cuEventSynchronize");
  if (e == NULL) END(INVALID_HANDLE);
  logf_locked("cuEventSynchronize ev=%d", e->id);
  if (e->on) run_upto(e->on, e->seq);
  END(OK);
}

CUresult cuEventQuery(CUevent e) {
  BEGIN("cuEventQuery");
  if (e == NULL) END(INVALID_HANDLE);
  END(e->on && pending_upto(e->on, e->seq) ? 600 /* CUDA_ERROR_NOT_READY */ : OK);
}

CUresult cuStreamSynchronize(CUstream s) {
  BEGIN("cuStreamSynchronize");
  need_context("cuStreamSynchronize");
  logf_locked("cuStreamSynchronize stream=%ld", (long)(intptr_t)s);
  struct fake_stream* st = stream_of("cuStreamSynchronize", s);
  if (st == NULL) END(INVALID_HANDLE);
  run_upto(st, LONG_MAX);
  END(OK);
}

CUresult cuStreamQuery(CUstream s) {
  BEGIN("cuStreamQuery");
  struct fake_stream* st = stream_of("cuStreamQuery", s);
  if (st == NULL) END(INVALID_HANDLE);
  END(pending_upto(st, LONG_MAX) ? 600 : OK);
}

CUresult cuCtxSynchronize(void) {
  BEGIN("cuCtxSynchronize");
  need_context("cuCtxSynchronize");
  logf_locked("cuCtxSynchronize");
  run_all();
  END(OK);
}

static CUstream create_stream(unsigned flags) {
  struct fake_stream* st = calloc(1, sizeof *st);
  if (st == NULL || nmade == MAX_STREAMS) abort();
  st->handle = (intptr_t)st;
  st->non_blocking = (flags & CU_STREAM_NON_BLOCKING) != 0;
  st->live = 1;
  made[nmade++] = st;
  return (CUstream)st;
}

CUresult cuStreamCreate(CUstream* s, unsigned flags) {
  BEGIN("cuStreamCreate");
  need_context("cuStreamCreate");
  if (s == NULL) END(INVALID_VALUE);
  *s = create_stream(flags);
  logf_locked("cuStreamCreate flags=%u -> %ld", flags, (long)(intptr_t)*s);
  END(OK);
}

CUresult cuStreamDestroy_v2(CUstream s) {
  BEGIN("cuStreamDestroy_v2");
  struct fake_stream* st = stream_of("cuStreamDestroy_v2", s);
  if (st == NULL || st == &legacy || st == &per_thread) END(INVALID_HANDLE);
  run_upto(st, LONG_MAX); /* queued work still completes */
  st->live = 0;
  END(OK);
}

static CUresult alloc_kind(const char* name, void** out, size_t n, int kind) {
  need_context(name);
  char* p = malloc(n ? n : 1);
  if (p == NULL || !add_alloc(p, n, kind)) {
    free(p);
    return OUT_OF_MEMORY;
  }
  *out = p;
  logf_locked("%s bytes=%zu -> 0x%llx", name, n, (unsigned long long)(uintptr_t)p);
  return OK;
}

static CUresult free_kind(const char* name, void* p, int kind) {
  need_context(name);
  logf_locked("%s 0x%llx", name, (unsigned long long)(uintptr_t)p);
  run_all(); /* the real driver waits for queued work before freeing */
  if (!remove_alloc(p, kind)) {
    violation("%s of 0x%llx, not a live %s allocation", name, (unsigned long long)(uintptr_t)p, kind_names[kind]);
    return INVALID_VALUE;
  }
  free(p);
  return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr* d, size_t n) {
  BEGIN("cuMemAlloc_v2");
  void* p = NULL;
  CUresult r = alloc_kind("cuMemAlloc_v2", &p, n, KIND_DEVICE);
  if (r == OK) *d = (CUdeviceptr)(uintptr_t)p;
  END(r);
}

CUresult cuMemAllocManaged(CUdeviceptr* d, size_t n, unsigned flags) {
  BEGIN("cuMemAllocManaged");
  (void)flags;
  void* p = NULL;
  CUresult r = alloc_kind("cuMemAllocManaged", &p, n, KIND_MANAGED);
  if (r == OK) *d = (CUdeviceptr)(uintptr_t)p;
  END(r);
}

CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) {
  BEGIN("cuMemHostAlloc");
  (void)flags;
  END(alloc_kind("cuMemHostAlloc", p, n, KIND_HOST));
}

CUresult cuMemFree_v2(CUdeviceptr d) {
  BEGIN("cuMemFree_v2");
  void* p = (void*)(uintptr_t)d;
  /* Managed memory is freed with cuMemFree too. */
  struct alloc* a = find_alloc(p, 0);
  END(free_kind("cuMemFree_v2", p, a && a->p == p && a->kind == KIND_MANAGED ? KIND_MANAGED : KIND_DEVICE));
}

CUresult cuMemFreeHost(void* p) {
  BEGIN("cuMemFreeHost");
  END(free_kind("cuMemFreeHost", p, KIND_HOST));
}

/* Device-to-host: done on return, after the stream's dependencies (for the
 * synchronous form, the legacy stream's: not those of non-blocking streams).
 * To pinned memory the async form returns at once. */
static CUresult dtoh(const char* name, void* dst, CUdeviceptr src, size_t n, CUstream s, int async) {
  need_context(name);
  logf_locked("%s bytes=%zu stream=%ld", name, n, (long)(intptr_t)s);
  if (!device_range_ok(name, src, n)) return INVALID_VALUE;
  struct fake_stream* st = stream_of(name, s);
  if (st == NULL) return INVALID_HANDLE;
  long at = enqueue(st, OP_COPY, dst, (const void*)(uintptr_t)src, n, 0);
  if (!async || !is_pinned(dst, n)) run_upto(st, at);
  return OK;
}

/* Host-to-device: a pageable source is staged on the call, the device write
 * happens later; a pinned one is read when the copy runs (async form) or
 * the call returns when done (synchronous form). */
static CUresult htod(const char* name, CUdeviceptr dst, const void* src, size_t n, CUstream s, int async) {
  need_context(name);
  logf_locked("%s bytes=%zu stream=%ld", name, n, (long)(intptr_t)s);
  if (!device_range_ok(name, dst, n)) return INVALID_VALUE;
  struct fake_stream* st = stream_of(name, s);
  if (st == NULL) return INVALID_HANDLE;
  int pinned = is_pinned(src, n);
  long at = enqueue(st, OP_COPY, (void*)(uintptr_t)dst, src, n, !pinned);
  if (pinned && !async) run_upto(st, at);
  return OK;
}

static CUresult dtod(const char* name, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  need_context(name);
  logf_locked("%s bytes=%zu stream=%ld", name, n, (long)(intptr_t)s);
  if (!device_range_ok(name, src, n) || !device_range_ok(name, dst, n)) return INVALID_VALUE;
  struct fake_stream* st = stream_of(name, s);
  if (st == NULL) return INVALID_HANDLE;
  enqueue(st, OP_COPY, (void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n, 0);
  return OK;
}

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  BEGIN("cuMemcpyDtoH_v2");
  END(dtoh("cuMemcpyDtoH_v2", dst, src, n, 0, 0));
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  BEGIN("cuMemcpyHtoD_v2");
  END(htod("cuMemcpyHtoD_v2", dst, src, n, 0, 0));
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  BEGIN("cuMemcpyDtoD_v2");
  END(dtod("cuMemcpyDtoD_v2", dst, src, n, 0));
}

CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  BEGIN("cuMemcpyDtoHAsync_v2");
  END(dtoh("cuMemcpyDtoHAsync_v2", dst, src, n, s, 1));
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  BEGIN("cuMemcpyHtoDAsync_v2");
  END(htod("cuMemcpyHtoDAsync_v2", dst, src, n, s, 1));
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  BEGIN("cuMemcpyDtoDAsync_v2");
  END(dtod("cuMemcpyDtoDAsync_v2", dst, src, n, s));
}

/* --- for tests (not part of the CUDA API) ---------------------------------- */

/* The log since the last reset, as one string (valid until the next call). */
const char* fakecuda_log(void) {
  static char* copy;
  pthread_mutex_lock(&mu);
  free(copy);
  copy = strdup(logbuf ? logbuf : "");
  pthread_mutex_unlock(&mu);
  return copy;
}

/* Clears the log and the call counters (not the driver's state). */
void fakecuda_reset(void) {
  pthread_mutex_lock(&mu);
  loglen = 0;
  if (logbuf) logbuf[0] = 0;
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) counters[i].n = 0;
  pthread_mutex_unlock(&mu);
}

/* How many times the named entry point was called since the last reset. */
long fakecuda_count(const char* name) {
  long n = 0;
  pthread_mutex_lock(&mu);
  for (size_t i = 0; i < sizeof counters / sizeof counters[0] && counters[i].name; i++)
    if (strcmp(counters[i].name, name) == 0) n = counters[i].n;
  pthread_mutex_unlock(&mu);
  return n;
}

/* The next call of name after skip others fails with result r (once). */
void fakecuda_fail(const char* name, int skip, int r) {
  pthread_mutex_lock(&mu);
  snprintf(failing.name, sizeof failing.name, "%s", name);
  failing.skip = skip;
  failing.r = r;
  pthread_mutex_unlock(&mu);
}

long fakecuda_violations(void) { return __atomic_load_n(&violations, __ATOMIC_SEQ_CST); }

/* The primary context's retain count of device dev (retains - releases). */
int fakecuda_retained(int dev) {
  pthread_mutex_lock(&mu);
  int n = dev >= 0 && dev < NDEV ? retained[dev] : -1;
  pthread_mutex_unlock(&mu);
  return n;
}

/* Live allocations made through the driver (registered ranges excluded). */
long fakecuda_live_allocs(void) {
  long n = 0;
  pthread_mutex_lock(&mu);
  for (size_t i = 0; i < nallocs; i++) n += allocs[i].kind != KIND_REGISTERED;
  pthread_mutex_unlock(&mu);
  return n;
}

int fakecuda_live_events(void) {
  pthread_mutex_lock(&mu);
  int n = live_events;
  pthread_mutex_unlock(&mu);
  return n;
}

/* Another library's work, for tests: a stream made without a context, a
 * kernel writing bytes on a stream (they land when it runs), a kernel that
 * reads on a stream and the host seeing what it read (the stream runs up to
 * it), and one stream waiting for another (an event handshake). */
intptr_t fakecuda_stream(int non_blocking) {
  pthread_mutex_lock(&mu);
  CUstream s = create_stream(non_blocking ? CU_STREAM_NON_BLOCKING : 0);
  pthread_mutex_unlock(&mu);
  return (intptr_t)s;
}

int fakecuda_write_on(intptr_t stream, void* dst, const void* src, size_t n) {
  pthread_mutex_lock(&mu);
  struct fake_stream* st = stream_of("fakecuda_write_on", (CUstream)stream);
  if (st) enqueue(st, OP_COPY, dst, src, n, 1);
  pthread_mutex_unlock(&mu);
  return st ? 0 : -1;
}

/* A kernel on stream that copies n bytes from src to dst when it runs. */
int fakecuda_copy_on(intptr_t stream, void* dst, const void* src, size_t n) {
  pthread_mutex_lock(&mu);
  struct fake_stream* st = stream_of("fakecuda_copy_on", (CUstream)stream);
  if (st) enqueue(st, OP_COPY, dst, src, n, 0);
  pthread_mutex_unlock(&mu);
  return st ? 0 : -1;
}

int fakecuda_read_on(intptr_t stream, void* dst, const void* src, size_t n) {
  pthread_mutex_lock(&mu);
  struct fake_stream* st = stream_of("fakecuda_read_on", (CUstream)stream);
  if (st) run_upto(st, enqueue(st, OP_COPY, dst, src, n, 0));
  pthread_mutex_unlock(&mu);
  return st ? 0 : -1;
}

int fakecuda_wait_stream(intptr_t waiter, intptr_t waitee) {
  pthread_mutex_lock(&mu);
  struct fake_stream *w = stream_of("fakecuda_wait_stream", (CUstream)waiter),
                     *e = stream_of("fakecuda_wait_stream", (CUstream)waitee);
  if (w && e) {
    long mark = enqueue(e, OP_MARK, NULL, NULL, 0, 0);
    enqueue(w, OP_WAIT, NULL, NULL, 0, 0);
    w->ops[w->nops - 1]->wait_on = e;
    w->ops[w->nops - 1]->wait_seq = mark;
  }
  pthread_mutex_unlock(&mu);
  return w && e ? 0 : -1;
}

/* Queued device work not yet done, over every stream. */
long fakecuda_pending(void) {
  pthread_mutex_lock(&mu);
  long n = pending_upto(&legacy, LONG_MAX) + pending_upto(&per_thread, LONG_MAX);
  for (int i = 0; i < nmade; i++) n += pending_upto(made[i], LONG_MAX);
  pthread_mutex_unlock(&mu);
  return n;
}

/* Runs all queued work (what a test does before freeing "device" memory). */
void fakecuda_drain(void) {
  pthread_mutex_lock(&mu);
  run_all();
  pthread_mutex_unlock(&mu);
}

/* The calling thread's context stack depth. */
int fakecuda_depth(void) { return depth; }

/* Declares [p, p+n) to be device memory (e.g. a NumPy buffer standing in for
 * a GPU tensor), so copies from it pass the range check. */
void fakecuda_register(void* p, size_t n) {
  pthread_mutex_lock(&mu);
  add_alloc(p, n, KIND_REGISTERED);
  pthread_mutex_unlock(&mu);
}

void fakecuda_unregister(void* p) {
  pthread_mutex_lock(&mu);
  run_all(); /* nothing queued may touch it once it is gone */
  remove_alloc(p, KIND_REGISTERED);
  pthread_mutex_unlock(&mu);
}
