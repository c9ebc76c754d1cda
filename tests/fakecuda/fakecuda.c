/* A stand-in CUDA driver (libcuda) for tests on machines without a GPU.
 *
 * It implements the cu* entry points godlpack's pyext/cuda.c loads, with host
 * memory acting as device memory: allocations are malloc, copies are memcpy,
 * streams are opaque numbers and events are handles that remember the stream
 * they were recorded on. godlpack loads it when GODLPACK_LIBCUDA names it.
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

struct fake_event {
  int id;
  intptr_t stream; /* last recorded on, -1 never */
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
  live_events++;
  *e = ev;
  logf_locked("cuEventCreate ev=%d flags=%u", ev->id, flags);
  END(OK);
}

CUresult cuEventRecord(CUevent e, CUstream s) {
  BEGIN("cuEventRecord");
  need_context("cuEventRecord");
  if (e == NULL) END(INVALID_HANDLE);
  e->stream = (intptr_t)s;
  logf_locked("cuEventRecord ev=%d stream=%ld", e->id, (long)(intptr_t)s);
  END(OK);
}

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  BEGIN("cuStreamWaitEvent");
  need_context("cuStreamWaitEvent");
  if (e == NULL) END(INVALID_HANDLE);
  if (e->stream == -1) violation("cuStreamWaitEvent on event %d, never recorded", e->id);
  logf_locked("cuStreamWaitEvent stream=%ld ev=%d flags=%u", (long)(intptr_t)s, e->id, flags);
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

CUresult cuStreamSynchronize(CUstream s) {
  BEGIN("cuStreamSynchronize");
  need_context("cuStreamSynchronize");
  logf_locked("cuStreamSynchronize stream=%ld", (long)(intptr_t)s);
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

CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  BEGIN("cuMemcpyDtoH_v2");
  need_context("cuMemcpyDtoH_v2");
  logf_locked("cuMemcpyDtoH_v2 bytes=%zu", n);
  if (!device_range_ok("cuMemcpyDtoH_v2 source", src, n)) END(INVALID_VALUE);
  memcpy(dst, (void*)(uintptr_t)src, n);
  END(OK);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  BEGIN("cuMemcpyHtoD_v2");
  need_context("cuMemcpyHtoD_v2");
  logf_locked("cuMemcpyHtoD_v2 bytes=%zu", n);
  if (!device_range_ok("cuMemcpyHtoD_v2 destination", dst, n)) END(INVALID_VALUE);
  memcpy((void*)(uintptr_t)dst, src, n);
  END(OK);
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  BEGIN("cuMemcpyDtoD_v2");
  need_context("cuMemcpyDtoD_v2");
  logf_locked("cuMemcpyDtoD_v2 bytes=%zu", n);
  if (!device_range_ok("cuMemcpyDtoD_v2 source", src, n) ||
      !device_range_ok("cuMemcpyDtoD_v2 destination", dst, n))
    END(INVALID_VALUE);
  memmove((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n);
  END(OK);
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
  remove_alloc(p, KIND_REGISTERED);
  pthread_mutex_unlock(&mu);
}
