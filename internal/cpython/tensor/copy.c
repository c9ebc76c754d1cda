/* Copies of a Tensor's data: compact copies made by Go (copy.go) into C
 * memory or driver memory of the tensor's own kind, and copies across the
 * bus, whose bytes the cuda layer moves (cuda/cudamem.c); each result is a
 * new Tensor. */
#include "tensor.h"

/* Go's compact copy of t into dst, without the GIL (t, held by the caller,
 * keeps the source alive); 0, or -1 with the Go error's exception. */
static int copy_compact_into(GdlTensor* t, void* dst) {
  char err[512];
  int kind;
  Py_BEGIN_ALLOW_THREADS kind = gdlCopyCompact(&t->view, dst, err, sizeof err);
  Py_END_ALLOW_THREADS if (kind == 0) return 0;
  gdl_raise_go(kind, err);
  return -1;
}

static int compact_nbytes(GdlTensor* t, uint64_t* n) {
  if (gdl_compact_nbytes(t->dims, t->view.ndim, t->view.dtype, n) == GDL_SHAPE_OK) return 0;
  PyErr_SetString(PyExc_MemoryError, "a compact copy of this (broadcast) view would not fit in memory");
  return -1;
}

/* t's view over new compact data at data on device. */
static PyObject* compact_tensor(GdlTensor* t, gdl_owner* owner, void* data, DLDevice device, uint64_t flags) {
  DLTensor v = t->view;
  v.data = data;
  v.byte_offset = 0;
  v.device = device;
  v.strides = NULL; /* compact */
  return gdl_tensor_new(owner, &v, flags);
}

PyObject* gdl_tensor_copy(GdlTensor* self, uint64_t extra_flags) {
  if (!gdl_cpu_accessible(self->view.device.device_type)) {
    PyErr_SetString(PyExc_BufferError, "godlpack can only copy CPU-accessible tensors");
    return NULL;
  }
  uint64_t nbytes;
  if (compact_nbytes(self, &nbytes) < 0) return NULL;
  void* data;
  if (!gdl_go_ready()) return NULL;
  gdl_owner* owner = gdl_owner_alloc(nbytes, &data);
  if (owner == NULL) return PyErr_NoMemory();
  if (copy_compact_into(self, data) < 0) {
    gdl_owner_decref(owner);
    return NULL;
  }
  return compact_tensor(self, owner, data, (DLDevice){kDLCPU, 0}, extra_flags);
}

PyObject* gdl_tensor_copy_method(PyObject* self, PyObject* unused) {
  (void)unused;
  return gdl_tensor_copy(GDL_AS(GdlTensor, self), 0);
}

/* A copy of t's bytes on another side of the bus (or on its CUDA device),
 * keeping its strides. Only CUDA device memory and host-visible memory can be
 * copied here. Device reads are queued on the stream the data is ready on
 * (stream; the legacy one for -1, "not synchronised"), so they come after the
 * producer's work without the host waiting: a device copy is ready on that
 * stream, a host copy is waited for. */
PyObject* gdl_cuda_copy(GdlTensor* t, DLDevice to, intptr_t stream) {
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
  if (gdl_cu_ready() != 0) return NULL;
  uint64_t before, after;
  int32_t dim;
  int32_t nd = t->view.ndim;
  if (gdl_byte_span(t->dims, t->dims + nd, nd, (uint64_t)t->view.dtype.bits * t->view.dtype.lanes, &before, &after,
                    &dim) != GDL_SHAPE_OK) {
    PyErr_SetString(PyExc_BufferError, "godlpack: the tensor's byte span overflows");
    return NULL;
  }
  size_t n = (size_t)(before + after); /* both bounded by the validated view */
  const char* first = (const char*)t->view.data + t->view.byte_offset - before;
  intptr_t on = stream == -1 || !gdl_cuda_stream_device(from) ? 1 : stream;
  gdl_owner* owner;
  void* base;
  if (gdl_cuda_span_copy(from, t->view.device.device_id, to, first, n, on, &owner, &base) < 0) return NULL;
  DLTensor v = t->view;
  v.data = base;
  v.byte_offset = before;
  v.device = to;
  PyObject* c = gdl_tensor_new(owner, &v, DLPACK_FLAG_BITMASK_IS_COPIED);
  if (c != NULL && from == kDLCUDA && to.device_type == kDLCUDA) GDL_AS(GdlTensor, c)->stream = on;
  return c;
}

/* A compact copy of a CUDAHost or CUDAManaged tensor in new memory of the
 * same kind, made by the CPU once the tensor's stream is done. */
static PyObject* host_kind_copy(GdlTensor* t, int kind, uint64_t flags) {
  uint64_t n;
  if (compact_nbytes(t, &n) < 0) return NULL;
  if (gdl_cu_ready() != 0 || !gdl_go_ready() || gdl_host_sync(t->view.device, t->stream) != 0) return NULL;
  gdl_owner* owner;
  void* data;
  if (gdl_cuda_alloc(kind, (size_t)n, t->view.device.device_id, &owner, &data) < 0) return NULL;
  if (copy_compact_into(t, data) < 0) {
    gdl_owner_decref(owner);
    return NULL;
  }
  return compact_tensor(t, owner, data, t->view.device, flags);
}

PyObject* gdl_device_copy(GdlTensor* t, uint64_t flags) {
  switch (t->view.device.device_type) {
  case kDLCUDA:
    return gdl_cuda_copy(t, t->view.device, t->stream);
  case kDLCUDAHost:
    return host_kind_copy(t, GDL_MEM_HOST, flags);
  case kDLCUDAManaged:
    return host_kind_copy(t, GDL_MEM_MANAGED, flags);
  case kDLCPU:
    return gdl_tensor_copy(t, flags);
  case kDLROCMHost: /* a CPU copy would change the device */
    PyErr_SetString(PyExc_BufferError, "godlpack cannot allocate ROCm host memory for a copy; ask for "
                    "dl_device=(1, 0) (device=(1, 0)) to get a CPU copy");
    return NULL;
  default: /* refused with the reason */
    return gdl_cuda_copy(t, t->view.device, t->stream);
  }
}
