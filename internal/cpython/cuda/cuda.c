/* CUDA through the driver library, loaded on first use (dynlib.h), so the
 * module builds and imports anywhere and only GPU work needs a GPU: stream
 * synchronisation for exports (event record + stream wait) and host syncs
 * before the CPU reads device-written memory. Memory and copies: cudamem.c.
 *
 * Each driver call retains the device's primary context and releases it
 * afterwards; memory allocated here holds its own reference until freed, so
 * godlpack never keeps a context alive that nothing of its uses.
 * tests/runtime/fakecuda is a stand-in driver that runs all of this without a GPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda.h"
#include "cudadrv.h"
#include "dynlib.h"

gdl_cu_table gdl_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
  const char* path = getenv("GODLPACK_LIBCUDA"); /* override, e.g. for tests */
  if (path == NULL || *path == 0) path = gdl_cuda_driver_name;
  char why[200];
  void* lib = gdl_lib_open(path, why, sizeof why);
  if (lib == NULL) {
    snprintf(gdl_cu.err, sizeof gdl_cu.err, "the CUDA driver library could not be loaded (%s)", why);
    return;
  }
  struct {
    void** slot;
    const char* name;
  } syms[] = {
      {(void**)&gdl_cu.Init, "cuInit"},
      {(void**)&gdl_cu.DeviceGet, "cuDeviceGet"},
      {(void**)&gdl_cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void**)&gdl_cu.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
      {(void**)&gdl_cu.CtxPush, "cuCtxPushCurrent_v2"},
      {(void**)&gdl_cu.CtxPop, "cuCtxPopCurrent_v2"},
      {(void**)&gdl_cu.EventCreate, "cuEventCreate"},
      {(void**)&gdl_cu.EventRecord, "cuEventRecord"},
      {(void**)&gdl_cu.StreamWaitEvent, "cuStreamWaitEvent"},
      {(void**)&gdl_cu.EventDestroy, "cuEventDestroy_v2"},
      {(void**)&gdl_cu.MemAlloc, "cuMemAlloc_v2"},
      {(void**)&gdl_cu.MemFree, "cuMemFree_v2"},
      {(void**)&gdl_cu.MemAllocManaged, "cuMemAllocManaged"},
      {(void**)&gdl_cu.MemHostAlloc, "cuMemHostAlloc"},
      {(void**)&gdl_cu.MemFreeHost, "cuMemFreeHost"},
      {(void**)&gdl_cu.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
      {(void**)&gdl_cu.MemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void**)&gdl_cu.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
      {(void**)&gdl_cu.StreamSynchronize, "cuStreamSynchronize"},
      {(void**)&gdl_cu.EventSynchronize, "cuEventSynchronize"},
      {(void**)&gdl_cu.MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
      {(void**)&gdl_cu.GetErrorString, "cuGetErrorString"},
      {(void**)&gdl_cu.CtxSynchronize, "cuCtxSynchronize"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = gdl_lib_sym(lib, syms[i].name);
    if (*syms[i].slot == NULL) {
      snprintf(gdl_cu.err, sizeof gdl_cu.err, "the CUDA driver library lacks %s", syms[i].name);
      return;
    }
  }
  CUresult r = gdl_cu.Init(0);
  if (r != 0) {
    snprintf(gdl_cu.err, sizeof gdl_cu.err, "cuInit failed with CUDA error %d (no usable GPU?)", r);
    return;
  }
  gdl_cu.ok = 1;
}

/* Sets BufferError for a failed driver call. */
int gdl_cu_fail(const char* what, CUresult r) {
  const char* s = NULL;
  if (gdl_cu.GetErrorString) gdl_cu.GetErrorString(r, &s);
  PyErr_Format(PyExc_BufferError, "godlpack: CUDA %s failed: %s (error %d)", what, s ? s : "unknown", r);
  return -1;
}

int gdl_cu_ready(void) {
  pthread_once(&load_once, load);
  if (gdl_cu.ok) return 0;
  PyErr_Format(PyExc_BufferError, "godlpack needs the CUDA driver for this: %s", gdl_cu.err);
  return -1;
}

PyObject* gdl_cuda_status(PyObject* mod, PyObject* unused) {
  pthread_once(&load_once, load);
  return Py_BuildValue("(Os)", gdl_cu.ok ? Py_True : Py_False, gdl_cu.ok ? "" : gdl_cu.err);
}

/* Makes the device's primary context current, holding a reference to it
 * until gdl_cu_leave(*dev). */
CUresult gdl_cu_enter(int32_t device_id, CUdevice* dev) {
  CUcontext ctx;
  CUresult r = gdl_cu.DeviceGet(dev, device_id);
  if (r == 0) r = gdl_cu.PrimaryCtxRetain(&ctx, *dev);
  if (r != 0) return r;
  r = gdl_cu.CtxPush(ctx);
  if (r != 0) gdl_cu.PrimaryCtxRelease(*dev);
  return r;
}

void gdl_cu_leave(CUdevice dev) {
  CUcontext c;
  gdl_cu.CtxPop(&c);
  gdl_cu.PrimaryCtxRelease(dev);
}

int gdl_stream_sync(DLDevice dev, intptr_t from, intptr_t to) {
  /* -1 on either side: the data was (or is to be) taken without synchronising. */
  if (to == -1 || from == -1 || from == to || !gdl_cuda_stream_device(dev.device_type)) return 0;
  if (dev.device_type == kDLROCM) {
    PyErr_SetString(PyExc_BufferError, "godlpack cannot synchronise ROCm streams; pass stream=-1");
    return -1;
  }
  if (gdl_cu_ready() != 0) return -1;
  CUdevice d;
  CUresult r = gdl_cu_enter(dev.device_id, &d);
  if (r != 0) return gdl_cu_fail("context setup", r);
  CUevent ev;
  r = gdl_cu.EventCreate(&ev, CU_EVENT_DISABLE_TIMING);
  if (r == 0) {
    r = gdl_cu.EventRecord(ev, gdl_cu_stream(from));
    if (r == 0) r = gdl_cu.StreamWaitEvent(gdl_cu_stream(to), ev, 0);
    gdl_cu.EventDestroy(ev);
  }
  gdl_cu_leave(d);
  return r == 0 ? 0 : gdl_cu_fail("event record / stream wait", r);
}

int gdl_cuda_stream_device(int32_t t) { return t == kDLCUDA || t == kDLCUDAManaged || t == kDLROCM; }

int gdl_host_sync(DLDevice dev, intptr_t stream) {
  if (stream == -1 || (dev.device_type != kDLCUDA && dev.device_type != kDLCUDAManaged)) return 0;
  pthread_once(&load_once, load);
  if (!gdl_cu.ok) return 0; /* no driver in this process: no GPU work can be in flight */
  CUdevice d;
  CUresult r = gdl_cu_enter(dev.device_id, &d);
  if (r != 0) return gdl_cu_fail("context setup", r);
  r = gdl_cu.StreamSynchronize(gdl_cu_stream(stream));
  gdl_cu_leave(d);
  return r == 0 ? 0 : gdl_cu_fail("stream synchronize", r);
}

