/* CUDA through the driver library, loaded with dlopen on first use, so the
 * module builds and imports anywhere and only GPU work needs a GPU: stream
 * synchronisation for exports (event record + stream wait), host syncs before
 * the CPU reads managed memory, and copies between host and device memory.
 *
 * Each driver call retains the device's primary context and releases it
 * afterwards; memory allocated here holds its own reference until freed, so
 * godlpack never keeps a context alive that nothing of its uses.
 * tests/fakecuda is a stand-in driver that runs all of this without a GPU. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "gdl.h"

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUstream;
typedef void* CUevent;
typedef unsigned long long CUdeviceptr;
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_MEM_ATTACH_GLOBAL 0x1

static struct {
  int ok;
  char err[300];
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*PrimaryCtxRelease)(CUdevice);
  CUresult (*CtxPush)(CUcontext);
  CUresult (*CtxPop)(CUcontext*);
  CUresult (*EventCreate)(CUevent*, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemAllocManaged)(CUdeviceptr*, size_t, unsigned);
  CUresult (*MemHostAlloc)(void**, size_t, unsigned);
  CUresult (*MemFreeHost)(void*);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*GetErrorString)(CUresult, const char**);
} cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char* path = getenv("GODLPACK_LIBCUDA"); /* override, e.g. for tests */
  if (path == NULL || *path == 0) path = "libcuda.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    snprintf(cu.err, sizeof cu.err, "the CUDA driver library could not be loaded (%s)", dlerror());
    return;
  }
  struct {
    void** slot;
    const char* name;
  } syms[] = {
      {(void**)&cu.Init, "cuInit"},
      {(void**)&cu.DeviceGet, "cuDeviceGet"},
      {(void**)&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void**)&cu.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
      {(void**)&cu.CtxPush, "cuCtxPushCurrent_v2"},
      {(void**)&cu.CtxPop, "cuCtxPopCurrent_v2"},
      {(void**)&cu.EventCreate, "cuEventCreate"},
      {(void**)&cu.EventRecord, "cuEventRecord"},
      {(void**)&cu.StreamWaitEvent, "cuStreamWaitEvent"},
      {(void**)&cu.EventDestroy, "cuEventDestroy_v2"},
      {(void**)&cu.MemAlloc, "cuMemAlloc_v2"},
      {(void**)&cu.MemFree, "cuMemFree_v2"},
      {(void**)&cu.MemAllocManaged, "cuMemAllocManaged"},
      {(void**)&cu.MemHostAlloc, "cuMemHostAlloc"},
      {(void**)&cu.MemFreeHost, "cuMemFreeHost"},
      {(void**)&cu.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
      {(void**)&cu.MemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void**)&cu.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
      {(void**)&cu.StreamSynchronize, "cuStreamSynchronize"},
      {(void**)&cu.GetErrorString, "cuGetErrorString"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (*syms[i].slot == NULL) {
      snprintf(cu.err, sizeof cu.err, "the CUDA driver library lacks %s", syms[i].name);
      return;
    }
  }
  CUresult r = cu.Init(0);
  if (r != 0) {
    snprintf(cu.err, sizeof cu.err, "cuInit failed with CUDA error %d (no usable GPU?)", r);
    return;
  }
  cu.ok = 1;
}

/* Sets BufferError for a failed driver call. */
static int fail(const char* what, CUresult r) {
  const char* s = NULL;
  if (cu.GetErrorString) cu.GetErrorString(r, &s);
  PyErr_Format(PyExc_BufferError, "godlpack: CUDA %s failed: %s (error %d)", what, s ? s : "unknown", r);
  return -1;
}

static int ready(void) {
  pthread_once(&load_once, load);
  if (cu.ok) return 0;
  PyErr_Format(PyExc_BufferError, "godlpack needs the CUDA driver for this: %s", cu.err);
  return -1;
}

PyObject* gdl_cuda_status(PyObject* mod, PyObject* unused) {
  pthread_once(&load_once, load);
  return Py_BuildValue("(Os)", cu.ok ? Py_True : Py_False, cu.ok ? "" : cu.err);
}

/* Makes the device's primary context current, holding a reference to it
 * until leave(*dev). */
static CUresult enter(int32_t device_id, CUdevice* dev) {
  CUcontext ctx;
  CUresult r = cu.DeviceGet(dev, device_id);
  if (r == 0) r = cu.PrimaryCtxRetain(&ctx, *dev);
  if (r != 0) return r;
  r = cu.CtxPush(ctx);
  if (r != 0) cu.PrimaryCtxRelease(*dev);
  return r;
}

static void leave(CUdevice dev) {
  CUcontext c;
  cu.CtxPop(&c);
  cu.PrimaryCtxRelease(dev);
}

static CUstream stream_handle(intptr_t s) { return (CUstream)s; } /* 1 legacy, 2 per-thread: CUDA's own values */

int gdl_stream_sync(DLDevice dev, intptr_t from, intptr_t to) {
  /* -1 on either side: the data was (or is to be) taken without synchronising. */
  if (to == -1 || from == -1 || from == to || !gdl_cuda_stream_device(dev.device_type)) return 0;
  if (dev.device_type == kDLROCM) {
    PyErr_SetString(PyExc_BufferError, "godlpack cannot synchronise ROCm streams; pass stream=-1");
    return -1;
  }
  if (ready() != 0) return -1;
  CUdevice d;
  CUresult r = enter(dev.device_id, &d);
  if (r != 0) return fail("context setup", r);
  CUevent ev;
  r = cu.EventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  if (r == 0) {
    r = cu.EventRecord(ev, stream_handle(from));
    if (r == 0) r = cu.StreamWaitEvent(stream_handle(to), ev, 0);
    cu.EventDestroy(ev);
  }
  leave(d);
  return r == 0 ? 0 : fail("event record / stream wait", r);
}

int gdl_cuda_stream_device(int32_t t) { return t == kDLCUDA || t == kDLCUDAManaged || t == kDLROCM; }

int gdl_host_sync(DLDevice dev, intptr_t stream) {
  if (stream == -1 || (dev.device_type != kDLCUDA && dev.device_type != kDLCUDAManaged)) return 0;
  pthread_once(&load_once, load);
  if (!cu.ok) return 0; /* no driver in this process: no GPU work can be in flight */
  CUdevice d;
  CUresult r = enter(dev.device_id, &d);
  if (r != 0) return fail("context setup", r);
  r = cu.StreamSynchronize(stream_handle(stream));
  leave(d);
  return r == 0 ? 0 : fail("stream synchronize", r);
}

/* Memory allocated through the driver, holding a reference to the primary
 * context it lives in until it is freed. */
enum { MEM_DEVICE, MEM_MANAGED, MEM_HOST };

typedef struct {
  gdl_owner base;
  void* ptr;
  CUdevice dev;
  int32_t device_id;
  int kind;
} cuda_owner;

static void release_cuda(gdl_owner* o) {
  cuda_owner* c = (cuda_owner*)o;
  CUdevice d;
  if (enter(c->device_id, &d) == 0) {
    if (c->kind == MEM_HOST) cu.MemFreeHost(c->ptr);
    else cu.MemFree((CUdeviceptr)(uintptr_t)c->ptr);
    leave(d);
  }
  cu.PrimaryCtxRelease(c->dev);
  free(c);
}

/* n bytes (at least 1) of the given kind in dev's primary context, which the
 * caller has entered. */
static CUresult cuda_alloc(int kind, size_t n, CUdevice dev, int32_t device_id, cuda_owner** out) {
  cuda_owner* c = malloc(sizeof *c);
  if (c == NULL) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  CUdeviceptr d = 0;
  void* p = NULL;
  CUresult r = kind == MEM_DEVICE    ? cu.MemAlloc(&d, n ? n : 1)
               : kind == MEM_MANAGED ? cu.MemAllocManaged(&d, n ? n : 1, CU_MEM_ATTACH_GLOBAL)
                                     : cu.MemHostAlloc(&p, n ? n : 1, 0);
  if (kind != MEM_HOST) p = (void*)(uintptr_t)d;
  CUcontext ctx;
  if (r == 0 && (r = cu.PrimaryCtxRetain(&ctx, dev)) != 0) {
    if (kind == MEM_HOST) cu.MemFreeHost(p);
    else cu.MemFree(d);
  }
  if (r != 0) {
    free(c);
    return r;
  }
  gdl_owner_init(&c->base, release_cuda);
  c->ptr = p;
  c->dev = dev;
  c->device_id = device_id;
  c->kind = kind;
  *out = c;
  return 0;
}

/* A copy of t's bytes on another side of the bus (or on its CUDA device),
 * keeping its strides. Only CUDA device memory and host-visible memory can be
 * copied here. Device reads are queued on the stream the data is ready on
 * (stream; the legacy one for -1, "not synchronised"), so they come after the
 * producer's work without the host waiting: a device copy is ready on that
 * stream, a host copy is waited for. A copy from the host uses the
 * synchronous call: a pageable source is staged and a pinned one read before
 * it returns (the caller may free or change it next), and the device write
 * completes on the legacy stream. */
static PyObject* span_copy(GdlTensor* t, DLDevice to, intptr_t stream) {
  int32_t from = t->view.device.device_type;
  if ((from != kDLCUDA && !gdl_cpu_accessible(from)) || (to.device_type != kDLCUDA && to.device_type != kDLCPU)) {
    PyErr_Format(PyExc_BufferError, "godlpack copies only between CUDA and host memory, not from device type %d "
                 "to %d", (int)from, (int)to.device_type);
    return NULL;
  }
  if ((int)t->view.dtype.bits * t->view.dtype.lanes % 8 != 0) {
    PyErr_SetString(PyExc_BufferError, "godlpack cannot copy sub-byte (float4/float6) tensors across devices");
    return NULL;
  }
  if (ready() != 0) return NULL;
  uint64_t before, after;
  int32_t dim;
  int32_t nd = t->view.ndim;
  if (gdl_byte_span(t->dims, t->dims + nd, nd, (uint64_t)t->view.dtype.bits * t->view.dtype.lanes, &before, &after,
                    &dim) != GDL_SHAPE_OK) {
    PyErr_SetString(PyExc_BufferError, "godlpack: the tensor's byte span overflows");
    return NULL;
  }
  size_t n = (size_t)(before + after); /* both bounded by the validated view */
  char* first = (char*)t->view.data + t->view.byte_offset - before;
  int32_t gpu = to.device_type == kDLCPU ? t->view.device.device_id : to.device_id;
  CUdevice dev;
  CUresult r = enter(gpu, &dev);
  if (r != 0) return fail("context setup", r), NULL;
  intptr_t on = stream == -1 || !gdl_cuda_stream_device(from) ? 1 : stream;
  gdl_owner* owner = NULL;
  void* base = NULL;
  if (to.device_type == kDLCPU) {
    owner = gdl_owner_alloc(n, &base);
    r = owner == NULL ? 2 /* out of memory */ : n ? cu.MemcpyDtoHAsync(base, (CUdeviceptr)first, n, stream_handle(on)) : 0;
    if (r == 0 && n) r = cu.StreamSynchronize(stream_handle(on));
  } else {
    /* Managed memory read from the host side: the producer's work lands first. */
    if (from != kDLCUDA && on != 1) r = cu.StreamSynchronize(stream_handle(on));
    cuda_owner* c;
    if (r == 0 && (r = cuda_alloc(MEM_DEVICE, n, dev, to.device_id, &c)) == 0) {
      owner = &c->base;
      base = c->ptr;
      CUdeviceptr d = (CUdeviceptr)(uintptr_t)base;
      if (n) r = from == kDLCUDA ? cu.MemcpyDtoDAsync(d, (CUdeviceptr)first, n, stream_handle(on)) : cu.MemcpyHtoD(d, first, n);
    }
  }
  leave(dev);
  if (r != 0) {
    if (owner) gdl_owner_decref(owner);
    return fail("copy", r), NULL;
  }
  DLTensor v = t->view;
  v.data = base;
  v.byte_offset = before;
  v.device = to;
  PyObject* c = gdl_tensor_new(owner, &v, DLPACK_FLAG_BITMASK_IS_COPIED);
  if (c != NULL && from == kDLCUDA && to.device_type == kDLCUDA) ((GdlTensor*)c)->stream = on;
  return c;
}

PyObject* gdl_cuda_copy(GdlTensor* t, DLDevice to, intptr_t stream) { return span_copy(t, to, stream); }

/* A compact copy of a CUDAHost or CUDAManaged tensor in new memory of the
 * same kind, made by the CPU once the tensor's stream is done. */
static PyObject* host_kind_copy(GdlTensor* t, int kind, uint64_t flags) {
  uint64_t n;
  if (gdl_compact_nbytes(t->dims, t->view.ndim, t->view.dtype, &n) != GDL_SHAPE_OK) {
    PyErr_SetString(PyExc_MemoryError, "a compact copy of this (broadcast) view would not fit in memory");
    return NULL;
  }
  if (ready() != 0 || !gdl_go_ready() || gdl_host_sync(t->view.device, t->stream) != 0) return NULL;
  CUdevice dev;
  CUresult r = enter(t->view.device.device_id, &dev);
  if (r != 0) return fail("context setup", r), NULL;
  cuda_owner* c;
  r = cuda_alloc(kind, (size_t)n, dev, t->view.device.device_id, &c);
  leave(dev);
  if (r != 0) return fail("allocation", r), NULL;
  char err[512];
  if (gdlCopyCompact(&t->view, c->ptr, err, sizeof err) != 0) {
    gdl_owner_decref(&c->base);
    PyErr_SetString(PyExc_BufferError, err);
    return NULL;
  }
  DLTensor v = t->view;
  v.data = c->ptr;
  v.byte_offset = 0;
  v.strides = NULL; /* compact */
  return gdl_tensor_new(&c->base, &v, flags);
}

PyObject* gdl_device_copy(GdlTensor* t, uint64_t flags) {
  switch (t->view.device.device_type) {
  case kDLCUDA:
    return span_copy(t, t->view.device, t->stream);
  case kDLCUDAHost:
    return host_kind_copy(t, MEM_HOST, flags);
  case kDLCUDAManaged:
    return host_kind_copy(t, MEM_MANAGED, flags);
  case kDLCPU:
    return gdl_tensor_copy(t, flags);
  case kDLROCMHost: /* a CPU copy would change the device */
    PyErr_SetString(PyExc_BufferError, "godlpack cannot allocate ROCm host memory for a copy; ask for "
                    "dl_device=(1, 0) (device=(1, 0)) to get a CPU copy");
    return NULL;
  default: /* refused with the reason */
    return span_copy(t, t->view.device, t->stream);
  }
}
