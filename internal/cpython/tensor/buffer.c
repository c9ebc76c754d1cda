/* The buffer protocol for CPU-accessible tensors, so memoryview(t) and
 * np.asarray(t) work without DLPack. */
#include "tensor.h"

/* PEP 3118 format of a dtype, or NULL when it has none (bfloat16, float8...). */
static const char* buffer_format(DLDataType dt) {
  if (dt.lanes != 1) return NULL;
  switch (dt.code) {
    case kDLBool: return dt.bits == 8 ? "?" : NULL;
    case kDLInt:
      switch (dt.bits) { case 8: return "b"; case 16: return "h"; case 32: return "i"; case 64: return "q"; }
      return NULL;
    case kDLUInt:
      switch (dt.bits) { case 8: return "B"; case 16: return "H"; case 32: return "I"; case 64: return "Q"; }
      return NULL;
    case kDLFloat:
      switch (dt.bits) { case 16: return "e"; case 32: return "f"; case 64: return "d"; }
      return NULL;
    case kDLComplex:
      switch (dt.bits) { case 64: return "Zf"; case 128: return "Zd"; }
      return NULL;
  }
  return NULL;
}

static int tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  GdlTensor* t = GDL_AS(GdlTensor, obj);
  if (!gdl_cpu_accessible(t->view.device.device_type)) {
    PyErr_SetString(PyExc_BufferError, "the buffer protocol needs a CPU-accessible tensor");
    return -1;
  }
  if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {
    PyErr_SetString(PyExc_BufferError, "tensor is read-only");
    return -1;
  }
  if (t->view.dtype.lanes > 1)
    return gdl_refuse_vector(PyExc_BufferError, t->view.dtype, "no buffer-protocol format (use __dlpack__)");
  const char* fmt = buffer_format(t->view.dtype);
  if (fmt == NULL) {
    PyErr_SetString(PyExc_BufferError, "this dtype has no buffer-protocol format; use __dlpack__");
    return -1;
  }
  if (gdl_host_sync(t->view.device, t->stream) != 0) return -1; /* managed memory: GPU work first */
  int32_t nd = t->view.ndim;
  int c = gdl_is_compact(t->dims, t->dims + nd, nd, 0), f = gdl_is_compact(t->dims, t->dims + nd, nd, 1);
  if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) ||
      ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f) ||
      ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) ||
      ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c)) {
    PyErr_SetString(PyExc_BufferError, "tensor is not contiguous as requested");
    return -1;
  }
  int32_t n = t->view.ndim;
  Py_ssize_t itemsize = t->view.dtype.bits / 8;
  /* Shape and strides in bytes, made by the first getbuffer and kept for the
   * tensor's life. Two threads' first calls meet in the critical section:
   * one makes them, the other sees them made. */
  int nomem = 0;
  GDL_BEGIN_CRITICAL_SECTION(obj);
  if (t->bufdims == NULL && n > 0) {
    Py_ssize_t* d = PyMem_Malloc(2 * (size_t)n * sizeof(Py_ssize_t));
    if (d == NULL) {
      nomem = 1;
    } else {
      /* Validation bounds stride * itemsize only where a stride is used: in
       * extents of 2 or more of a non-empty view. The others may be anything
       * (and overflow): they are given as 0. */
      int empty = gdl_shape_count(t->dims, n) == 0;
      for (int32_t i = 0; i < n; i++) {
        d[i] = (Py_ssize_t)t->dims[i];
        d[n + i] = !empty && t->dims[i] > 1 ? (Py_ssize_t)(t->dims[n + i] * itemsize) : 0;
      }
      t->bufdims = d; /* whole before it is seen */
    }
  }
  GDL_END_CRITICAL_SECTION();
  if (nomem) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t len;
  if (__builtin_mul_overflow((Py_ssize_t)gdl_shape_count(t->dims, n), itemsize, &len)) {
    PyErr_SetString(PyExc_BufferError, "the view's length in bytes overflows (a broadcast view?)");
    return -1;
  }
  view->buf = (char*)t->view.data + t->view.byte_offset;
  view->obj = Py_NewRef(obj);
  view->len = len;
  view->itemsize = itemsize;
  view->readonly = (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  /* Without PyBUF_ND there is no shape to give: the buffer is its bytes, one
   * dimension (as PyBuffer_FillInfo says), which is what hashlib and the like accept. */
  view->ndim = (flags & PyBUF_ND) == PyBUF_ND ? n : 1;
  view->format = (flags & PyBUF_FORMAT) ? (char*)fmt : NULL;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? t->bufdims : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? (t->bufdims ? t->bufdims + n : NULL) : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

#ifdef Py_LIMITED_API
int gdl_tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags) { return tensor_getbuffer(obj, view, flags); }
#else
PyBufferProcs gdl_buffer_procs = {.bf_getbuffer = tensor_getbuffer, .bf_releasebuffer = NULL};
#endif
